"""A fake `machine` module for running the firmware under the MicroPython unix port.

MicroPython code (runs in `micropython`, not CPython). Pins, UARTs and SPI buses keep
registries so a check can reach the objects the firmware created: `Pin.pins[n]`,
`UART.uarts[id]`, and `SPI.devices[cs_pin] = device` attaches a simulated chip
(fake_mfrc522.FakeMfrc522) that answers while its chip-select pin is low.
"""


class Pin:
    IN = 0
    OUT = 1
    PULL_UP = 1
    PULL_DOWN = 2
    pins = {}  # pin id -> the Pin created last for it

    def __init__(self, pin_id, mode=-1, pull=-1, *, value=None):
        self.id = pin_id
        self.mode = mode
        self._value = 0
        self.listeners = []  # called with the new value on every change
        if value is not None:
            self._value = value
        Pin.pins[pin_id] = self

    def init(self, mode=-1, pull=-1, *, value=None):
        self.mode = mode
        if value is not None:
            self.value(value)

    def value(self, *args):
        if not args:
            return self._value
        new = 1 if args[0] else 0
        if new != self._value:
            self._value = new
            for listener in self.listeners:
                listener(new)
        return None

    def on(self):
        self.value(1)

    def off(self):
        self.value(0)


class UART:
    uarts = {}  # UART id -> the UART created last for it

    def __init__(self, uart_id, baudrate=115200, *, tx=None, rx=None, rxbuf=64):
        self.id = uart_id
        self.baudrate = baudrate
        self.tx = tx
        self.rx = rx
        self.pending = bytearray()
        UART.uarts[uart_id] = self

    def any(self):
        return len(self.pending)

    def read(self, count=-1):
        if not self.pending:
            return None
        if count < 0:
            count = len(self.pending)
        data = bytes(self.pending[:count])
        self.pending = self.pending[count:]
        return data


class SPIError(Exception):
    """The fake bus was used in a way a real one would not work."""


class SPI:
    devices = {}  # chip-select pin id -> simulated device (begin/end/exchange)
    buses = {}

    def __init__(self, spi_id, baudrate=1000000, *, polarity=0, phase=0, sck=None, mosi=None,
                 miso=None):
        if polarity != 0 or phase != 0:
            raise SPIError("the MFRC522 needs SPI mode 0")
        self.id = spi_id
        self.baudrate = baudrate
        self.pins = (sck, mosi, miso)
        SPI.buses[spi_id] = self

    @staticmethod
    def attach(cs_id, device):
        """Attach `device` to chip-select pin `cs_id` (the pin may be created later)."""
        SPI.devices[cs_id] = device

    def _selected(self):
        chosen = [
            device
            for cs_id, device in SPI.devices.items()
            if cs_id in Pin.pins and Pin.pins[cs_id].mode == Pin.OUT and Pin.pins[cs_id].value() == 0
        ]
        if len(chosen) != 1:
            raise SPIError("%d devices selected" % len(chosen))
        device = chosen[0]
        device.watch(Pin.pins[device.cs_id])
        return device

    def write(self, data):
        device = self._selected()
        for byte in data:
            device.exchange(byte)

    def write_readinto(self, out, into):
        if len(out) != len(into):
            raise SPIError("write_readinto needs buffers of one length")
        device = self._selected()
        for i in range(len(out)):
            into[i] = device.exchange(out[i])

    def read(self, count, write=0):
        device = self._selected()
        return bytes(device.exchange(write) for _ in range(count))

    def readinto(self, into, write=0):
        device = self._selected()
        for i in range(len(into)):
            into[i] = device.exchange(write)
