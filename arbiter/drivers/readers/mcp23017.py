"""Notched-key reader for both slots through one MCP23017 I2C port expander.

Wiring:

- MCP23017 VDD (pin 9) to the Pi's 3.3 V (pin 1), VSS (pin 10) to GND; a
  100 nF capacitor across them. 3.3 V only: the Pi's I2C and GPIO are not
  5 V tolerant.
- SDA (pin 13) to GPIO2/SDA (pin 3), SCL (pin 12) to GPIO3/SCL (pin 5); the
  Pi has 1.8 kΩ pull-ups on both already. Enable I2C with ``raspi-config``.
- A0, A1, A2 (pins 15-17) to GND: address 0x20 (each tied to 3.3 V instead
  adds 1, 2 or 4, up to 0x27). RESET (pin 18) to 3.3 V.
- Attacker slot switches 1..7 between GPA0..GPA6 (pins 21-27) and GND;
  defender slot switches 1..7 between GPB0..GPB6 (pins 1-7) and GND. The
  chip's internal 100 kΩ pull-ups are turned on, so no resistors.
- INTA (pin 20) to a Pi GPIO given as ``interrupt_pin`` (BCM number). The
  output is configured open-drain and active low, and the Pi's internal
  pull-up on that GPIO holds it high; INTB may stay unconnected (mirrored).

With no interrupt line (``interrupt_pin=None``) the ports are polled once per
debounce window instead: a fallback that works but keeps the Pi busier.

The ``bus`` is any object with smbus2's ``read_i2c_block_data``,
``write_i2c_block_data`` and ``write_byte_data`` (see :func:`open_bus`); the
reader never closes it. An I2C error never escapes: both slots report FAULT,
setup is retried every ``retry_interval`` seconds, and the current state is
reported once the chip answers again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from typing import Protocol

from arbiter.drivers.pins import InputLine
from arbiter.drivers.readers.base import Clock, ReadingCallback, SlotReading
from arbiter.drivers.readers.debounce import Debouncer
from arbiter.drivers.readers.errors import ReaderError
from arbiter.drivers.readers.key_thread import QueueWorker
from arbiter.drivers.readers.raw import RawCallback, RawKind, RawSample, emit
from arbiter.rules.keycode import DEFAULT_KEYCODE, KeyCode, to_bits
from arbiter.rules.verdict import Role

_log = logging.getLogger(__name__)

# Register addresses with IOCON.BANK = 0 (the power-on mapping): each port A
# register is followed by its port B twin, so one two-byte block covers both.
IODIRA = 0x00
IPOLA = 0x02
GPINTENA = 0x04
DEFVALA = 0x06
INTCONA = 0x08
IOCON = 0x0A  # one register, also at 0x0B
GPPUA = 0x0C
INTFA = 0x0E
INTCAPA = 0x10
GPIOA = 0x12
OLATA = 0x14

# IOCON bits (datasheet, register 3-6).
IOCON_BANK = 0x80  # 0: A/B registers paired, the addresses above
IOCON_MIRROR = 0x40  # 1: INTA and INTB are one line signalling both ports
IOCON_SEQOP = 0x20  # 0: the address pointer increments: GPIOA then GPIOB in one read
IOCON_DISSLW = 0x10  # 0: SDA slew-rate control on (power-on value)
IOCON_HAEN = 0x08  # address pins for the SPI MCP23S17 only; 0
IOCON_ODR = 0x04  # 1: INT is open drain, pulled up by the Pi (overrides INTPOL)
IOCON_INTPOL = 0x02  # ignored once ODR = 1; 0

#: BANK=0, MIRROR=1, SEQOP=0, DISSLW=0, HAEN=0, ODR=1, INTPOL=0: 0x44.
IOCON_VALUE = IOCON_MIRROR | IOCON_ODR

ADDRESSES = range(0x20, 0x28)

# Poll period floor, so a zero window never spins.
_MIN_PERIOD = 0.005

_IRQ = "irq"


class I2CBus(Protocol):
    """The part of :class:`smbus2.SMBus` the reader uses."""

    def read_i2c_block_data(self, i2c_addr: int, register: int, length: int) -> list[int]: ...

    def write_i2c_block_data(self, i2c_addr: int, register: int, data: list[int]) -> None: ...

    def write_byte_data(self, i2c_addr: int, register: int, value: int) -> None: ...


def open_bus(n: int = 1) -> I2CBus:
    """Open ``/dev/i2c-<n>`` with smbus2.

    :raises ReaderError: if the bus does not exist (I2C off, not a Pi).
    """
    from smbus2 import SMBus

    try:
        return SMBus(n)
    except OSError as exc:
        raise ReaderError(
            f"cannot open I2C bus /dev/i2c-{n} (enable I2C with raspi-config): {exc}"
        ) from exc


def _check_bits(slot: Role, bits: Iterable[int], keycode: KeyCode) -> tuple[int, ...]:
    found = tuple(bits)
    if len(found) != keycode.switches:
        raise ReaderError(f"{slot.value} slot needs {keycode.switches} expander bits, got {found}")
    if any(not 0 <= b <= 15 for b in found):
        raise ReaderError(f"{slot.value} slot bits must be 0..15 (GPA0..GPB7), got {found}")
    return found


class Mcp23017KeyReader(QueueWorker[str]):
    """Both slots' key switches on one MCP23017 (bit 0-7 = GPA0-7, 8-15 = GPB0-7).

    ``attacker_bits[0]`` is the attacker slot's switch 1, and likewise for the
    defender. Debounce windows and retries are timed on ``clock`` (a monotonic
    clock in seconds; tests pass a fake one).

    :raises ReaderError: for a bad address, bit list or interrupt pin (an
        absent chip is not an error here: it reports FAULT once started).
    """

    def __init__(
        self,
        bus: I2CBus,
        *,
        address: int = 0x20,
        attacker_bits: Iterable[int] = range(0, 7),
        defender_bits: Iterable[int] = range(8, 15),
        interrupt_pin: int | None,
        keycode: KeyCode = DEFAULT_KEYCODE,
        window: float = 0.03,
        invalid_after: float = 1.0,
        pin_factory: object = None,
        retry_interval: float = 1.0,
        clock: Clock = time.monotonic,
    ) -> None:
        if address not in ADDRESSES:
            raise ReaderError(f"MCP23017 address must be 0x20..0x27, got {address:#04x}")
        if retry_interval <= 0:
            raise ReaderError(f"retry_interval must be > 0 s, got {retry_interval}")
        bits = {
            Role.ATTACKER: _check_bits(Role.ATTACKER, attacker_bits, keycode),
            Role.DEFENDER: _check_bits(Role.DEFENDER, defender_bits, keycode),
        }
        used = bits[Role.ATTACKER] + bits[Role.DEFENDER]
        if len(set(used)) != len(used):
            raise ReaderError(f"expander bits repeat: {used}")
        super().__init__(f"mcp23017-{address:#04x}")
        self._bus = bus
        self._address = address
        self._bits = bits
        self._mask = sum(1 << b for b in set(used))
        self._period = max(window, _MIN_PERIOD)
        self._retry_interval = retry_interval
        self._clock = clock
        self._detail = f"I2C expander at 0x{address:02X} not answering"
        self._debouncers = {
            role: Debouncer(role, keycode=keycode, window=window, invalid_after=invalid_after)
            for role in (Role.ATTACKER, Role.DEFENDER)
        }
        self._raw: RawCallback | None = None
        self._interrupt: InputLine | None = None
        self._pin_error: type[Exception] = OSError
        if interrupt_pin is not None:
            from gpiozero.exc import GPIOZeroError

            self._pin_error = GPIOZeroError
            self._interrupt = _open_interrupt(interrupt_pin, pin_factory)

    @property
    def slots(self) -> tuple[Role, ...]:
        return (Role.ATTACKER, Role.DEFENDER)

    def start(self, report: ReadingCallback) -> None:
        """Set the chip up (in the background) and report both slots once settled.

        :raises ReaderError: if already started or closed.
        """
        self._start_worker(report)
        if self._interrupt is not None:
            self._interrupt.when_activated = self._interrupted

    def watch_raw(self, callback: RawCallback | None) -> None:
        """Show both slots' switch patterns at every read (before debounce); one read at once."""
        self._raw = callback
        if callback is not None:
            self._events.put(_IRQ)  # read the ports now, so the watch starts with the state

    def close(self) -> None:
        """Stop watching and free the interrupt pin; safe to call twice."""
        self._stop_worker(self._interrupt.close if self._interrupt is not None else lambda: None)

    def _interrupted(self) -> None:
        """INT fell (any thread): wake the worker to read the ports."""
        self._events.put(_IRQ)

    def _setup(self) -> None:
        """Configure the chip; each value is what the wiring above needs."""
        bus, addr = self._bus, self._address
        # MIRROR: one INT line for both slots; ODR: open drain, so the Pi's
        # pull-up sets the high level (3.3 V) and INTPOL does not matter;
        # BANK=0 keeps the paired addresses; SEQOP=0 lets the pointer run on.
        bus.write_byte_data(addr, IOCON, IOCON_VALUE)
        # All 16 lines inputs (power-on value, written in case someone changed it).
        bus.write_i2c_block_data(addr, IODIRA, [0xFF, 0xFF])
        # No inversion: a closed switch reads 0; the software inverts.
        bus.write_i2c_block_data(addr, IPOLA, [0x00, 0x00])
        # 100 kΩ pull-ups on all 16 lines: open switches read 1, unused lines don't float.
        bus.write_i2c_block_data(addr, GPPUA, [0xFF, 0xFF])
        # Interrupt on any change from the previous value (DEFVAL is then unused).
        bus.write_i2c_block_data(addr, INTCONA, [0x00, 0x00])
        # Last, enable interrupt-on-change on the switch lines only.
        bus.write_i2c_block_data(addr, GPINTENA, [self._mask & 0xFF, self._mask >> 8])

    def _read(self) -> int:
        """Both ports in one block read (this also clears a pending interrupt)."""
        data = self._bus.read_i2c_block_data(self._address, GPIOA, 2)
        if len(data) != 2:
            raise OSError(f"short read from MCP23017: {data!r}")
        return data[0] | (data[1] << 8)

    def _feed(self, levels: int, now: float) -> list[SlotReading]:
        readings: list[SlotReading] = []
        for role, debouncer in self._debouncers.items():
            bits = to_bits(not ((levels >> b) & 1) for b in self._bits[role])
            emit(self._raw, RawSample(RawKind.SWITCHES, role, bits, at=now))
            readings += debouncer.feed(bits, now)
        return readings

    def _fault(self, exc: OSError) -> list[SlotReading]:
        readings: list[SlotReading] = []
        for debouncer in self._debouncers.values():
            readings += debouncer.fault(self._detail)
        if readings:
            _log.warning("%s: %s", self._detail, exc)
        return readings

    def _next_read(self, now: float) -> float | None:
        """When to read again unprompted: each period when polling, or while INT stays low."""
        if self._interrupt is None:
            return now + self._period
        try:
            still_low = bool(self._interrupt.is_active)
        except self._pin_error:  # pin closed during close()
            return None
        return now + self._period if still_low else None

    def _run(self) -> None:
        healthy = False
        retry_at = self._clock()  # set up at once
        read_at: float | None = None
        while True:
            due = [d for d in (db.deadline() for db in self._debouncers.values()) if d is not None]
            if healthy:
                if read_at is not None:
                    due.append(read_at)
            else:
                due.append(retry_at)
            timeout = None if not due else max(0.0, min(due) - self._clock())
            items = self._next_batch(timeout)
            if items is None:
                return
            now = self._clock()
            readings: list[SlotReading] = []
            if healthy:
                wanted = bool(items) or (read_at is not None and now >= read_at)
            else:
                wanted = now >= retry_at  # interrupts while broken are ignored
            if wanted:
                try:
                    if not healthy:
                        self._setup()
                    levels = self._read()
                except OSError as exc:
                    readings += self._fault(exc)
                    healthy = False
                    retry_at = now + self._retry_interval
                else:
                    if not healthy:
                        _log.info("I2C expander at 0x%02X ready", self._address)
                    healthy = True
                    readings += self._feed(levels, now)
                    read_at = self._next_read(now)
            for debouncer in self._debouncers.values():
                readings += debouncer.poll(self._clock())
            self._deliver(readings)


def _open_interrupt(pin: int, pin_factory: object) -> InputLine:
    """The INT line as a pulled-up input, active (asserted) when low."""
    from gpiozero import DigitalInputDevice
    from gpiozero.exc import GPIOZeroError

    try:
        line: InputLine = DigitalInputDevice(
            pin, pull_up=True, bounce_time=None, pin_factory=pin_factory
        )
    except (GPIOZeroError, OSError) as exc:
        raise ReaderError(f"cannot open interrupt GPIO {pin}: {exc}") from exc
    return line
