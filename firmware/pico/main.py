"""gg-slots firmware: a Raspberry Pi Pico reads two slot readers and reports both
slots to the arbiter over USB serial (protocol: firmware/PROTOCOL.md).

READER below chooses the readers; the line protocol is the same either way:
  "rdm6300": two RDM6300 125 kHz modules (EM4100 tags) on UART0 / UART1
  "rc522":   two RC522 (MFRC522) 13.56 MHz boards (NTAG / MIFARE tags), on SPI0 and SPI1
Wiring: the tables in README.md beside this file, tested against the pin constants
below (the one place pins are set). RDM6300 TX is 5 V logic and RP2040 pins are not
5 V tolerant: keep the dividers. The RC522 is a 3.3 V part: power it from 3V3, never 5 V.

MicroPython code: it also imports under CPython (with a stub `machine`
module) so that tests can check the parser, the line format and the slot
logic; tests/firmware/test_micropython.py runs all of it, main() included, under the
MicroPython unix port with fake hardware.
"""

import sys
import time

import mfrc522
from machine import SPI, UART, Pin

READER = "rc522"  # or "rdm6300"

# Pins, as GP numbers: the only place they are set (README.md's tables are tested
# against these).
RDM6300_UART = {"A": (0, 0, 1), "D": (1, 4, 5)}  # slot: (UART id, TX pin, RX pin)
# RC522: each board on its own SPI bus, so no wire is shared (no splice, no solder):
# slot: (SPI id, SCK, MOSI, MISO, SDA = chip select, RST). Only 3.3 V is shared
# (a Dupont Y or a mini breadboard); each board has its own GND pin.
RC522_BUS = {"A": (0, 18, 19, 16, 17, 20), "D": (1, 10, 11, 12, 13, 14)}
RC522_BAUDRATE = 1_000_000

# RC522 receiver gain (RFCfgReg RxGain) in dB at start-up: 18, 23, 33 (the chip's
# reset value), 38, 43 or 48. The Pi sets it over the link (`GAIN 38`, its
# reader.rx_gain_db), so a builder tunes the read range without reflashing.
RX_GAIN_DB = 33

PROTOCOL = "gg-slots"
VERSION = 1
REMOVAL_MS = 300  # no valid frame (RDM6300) or answer (RC522) for this long: the tag has left
RC522_POLL_MS = 50  # how often each RC522 looks for a tag
LOOP_SLEEP_MS = 5
MAX_INPUT = 64  # bytes read from the Pi per loop
MAX_COMMAND = 16  # a longer line from the Pi is no command: dropped
STX = 0x02
ETX = 0x03

try:
    ticks_ms = time.ticks_ms
    ticks_diff = time.ticks_diff
except AttributeError:  # CPython, for the tests

    def ticks_ms():
        return int(time.monotonic() * 1000)  # type: ignore[attr-defined]

    def ticks_diff(a, b):
        return a - b


def _nibble(byte):
    """Value of an ASCII hex digit, or -1."""
    if 48 <= byte <= 57:
        return byte - 48
    if 65 <= byte <= 70:
        return byte - 55
    if 97 <= byte <= 102:
        return byte - 87
    return -1


class FrameParser:
    """RDM6300 frames -> tag ids (10 hex digits, upper case), checksum verified.

    Same rules as arbiter.drivers.readers.rdm6300.FrameParser: STX starts a frame,
    anything out of place abandons it, lower-case hex is accepted, a wrong
    checksum drops the frame (counted in bad_checksums).
    """

    def __init__(self):
        self.values = []  # nibbles of the frame so far (12 when complete)
        self.in_frame = False
        self.frames = 0
        self.bad_checksums = 0
        self.malformed = 0

    def feed(self, data):
        tags = []
        for byte in data:
            if byte == STX:
                if self.in_frame:
                    self.malformed += 1
                self.values = []
                self.in_frame = True
            elif not self.in_frame:
                continue
            elif len(self.values) < 12 and _nibble(byte) >= 0:
                self.values.append(_nibble(byte))
            elif len(self.values) == 12 and byte == ETX:
                tag = self._finish()
                if tag is not None:
                    tags.append(tag)
            else:
                self.malformed += 1
                self.values = []
                self.in_frame = False
        return tags

    def _finish(self):
        v = self.values
        self.values = []
        self.in_frame = False
        data = [v[i] * 16 + v[i + 1] for i in range(0, 12, 2)]
        check = 0
        for byte in data[:5]:
            check ^= byte
        if check != data[5]:
            self.bad_checksums += 1
            return None
        self.frames += 1
        return "".join("%02X" % byte for byte in data[:5])


def crc8(data):
    """CRC-8/SMBUS (polynomial 0x07, initial 0) of bytes."""
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            if crc & 0x80:
                crc = ((crc << 1) ^ 0x07) & 0xFF
            else:
                crc = (crc << 1) & 0xFF
    return crc


def encode(body):
    """One protocol line: BODY*HH and a newline."""
    return "%s*%02X\n" % (body, crc8(body.encode()))


def printable(text, limit=60):
    """Text safe for an ERR line: printable ASCII only, at most `limit` chars."""
    return "".join(c if 32 <= ord(c) < 127 and c != "*" else "?" for c in text)[:limit]


class SlotState:
    """What a slot reports: the tag seen last, gone after REMOVAL_MS without a sighting."""

    def __init__(self, letter):
        self.letter = letter
        self.tag = None
        self.seen_ms = 0
        self.fault = None  # found at start-up; sent as an ERR line with the full state

    def saw(self, tag, now_ms):
        """Note one sighting (a tag id, or None for none); True if the state changed."""
        if tag is not None:
            self.seen_ms = now_ms
            if tag != self.tag:
                self.tag = tag
                return True
        elif self.tag is not None and ticks_diff(now_ms, self.seen_ms) >= REMOVAL_MS:
            self.tag = None
            return True
        return False

    def body(self):
        if self.tag is None:
            return self.letter + " EMPTY"
        return self.letter + " TAG " + self.tag


class UartSlot(SlotState):
    """One slot read by an RDM6300 on a UART: its frames' checksums are checked."""

    def __init__(self, letter: str, uart: UART) -> None:
        super().__init__(letter)
        self.uart = uart
        self.parser = FrameParser()

    def update(self, now_ms):
        """Read what the module sent; True if the slot's state changed."""
        count = self.uart.any()
        data = self.uart.read(count) if count else None
        tags = self.parser.feed(data) if data else []
        return self.saw(tags[-1] if tags else None, now_ms)


def uid_hex(uid):
    """A UID as the protocol's tag id: upper-case hex, 2 digits a byte."""
    return "".join("%02X" % byte for byte in uid)


class Rc522Slot(SlotState):
    """One slot read by an MFRC522, polled every RC522_POLL_MS.

    A failed exchange (collision, bad BCC or CRC_A) is counted and treated as no
    sighting: the slot keeps its state until REMOVAL_MS passes without a good read.
    """

    def __init__(self, letter: str, reader: mfrc522.MFRC522) -> None:
        super().__init__(letter)
        self.reader = reader
        self.polled_ms = None
        self.errors = 0

    def update(self, now_ms):
        """Poll the reader if due; True if the slot's state changed."""
        if self.fault:  # no board: polling would only wait for its timeouts
            return False
        if self.polled_ms is not None and ticks_diff(now_ms, self.polled_ms) < RC522_POLL_MS:
            return False
        self.polled_ms = now_ms
        try:
            uid = self.reader.read_uid()
        except mfrc522.CardError:
            self.errors += 1
            uid = None
        return self.saw(None if uid is None else uid_hex(uid), now_ms)


def make_slots(reader):
    """The two slots, A then D, on the pins above, for READER `reader`."""
    if reader == "rdm6300":
        return [
            UartSlot(letter, UART(uart, baudrate=9600, tx=Pin(tx), rx=Pin(rx), rxbuf=256))
            for letter, (uart, tx, rx) in sorted(RDM6300_UART.items())
        ]
    if reader == "rc522":
        slots = []
        for letter, (bus, sck, mosi, miso, cs, rst) in sorted(RC522_BUS.items()):
            spi = SPI(bus, baudrate=RC522_BAUDRATE, polarity=0, phase=0,
                      sck=Pin(sck), mosi=Pin(mosi), miso=Pin(miso))
            reset = Pin(rst, Pin.OUT, value=0)  # hard reset of the board
            reader_ = mfrc522.MFRC522(spi, Pin(cs))
            reset.value(1)
            time.sleep_ms(50)  # let the oscillator start after the reset; ample
            reader_.init()
            slot = Rc522Slot(letter, reader_)
            if not reader_.present():
                slot.fault = "RC522 %s not answering on SPI: check its wiring" % letter
            else:
                reader_.set_rx_gain(mfrc522.RX_GAIN_CODE[RX_GAIN_DB])
            slots.append(slot)
        return slots
    raise ValueError("READER must be 'rdm6300' or 'rc522', not %r" % (reader,))


def state_lines(slots):
    """The full-state answer: HELLO, one line per slot, then an ERR line per faulty slot."""
    lines = [encode("HELLO %s %d" % (PROTOCOL, VERSION))]
    for slot in slots:
        lines.append(encode(slot.body()))
    for slot in slots:
        if slot.fault:
            lines.append(encode("ERR " + printable(slot.fault)))
    return lines


def gain_answer(slots, text):
    """Carry out `GAIN <dB>` on the RC522 slots; the line to send back, or None.

    Answers `GAIN <dB>` once set on every board that answers, an ERR line for a gain
    the chip has not; an RDM6300 has no gain: nothing is sent.
    """
    words = text.split()
    boards = [slot for slot in slots if isinstance(slot, Rc522Slot) and not slot.fault]
    if not [slot for slot in slots if isinstance(slot, Rc522Slot)]:
        return None
    db = int(words[1]) if len(words) == 2 and words[1].isdigit() else -1
    if db not in mfrc522.RX_GAIN_CODE:
        gains = " ".join(str(g) for g in sorted(mfrc522.RX_GAIN_CODE))
        return encode("ERR " + printable("GAIN %s: not one of %s" % (" ".join(words[1:]), gains)))
    for slot in boards:
        slot.reader.set_rx_gain(mfrc522.RX_GAIN_CODE[db])
    return encode("GAIN %d" % db)


class Firmware:
    """The main loop's work, one step at a time (tests drive it with a fake clock)."""

    def __init__(self, slots, out):
        self.slots = slots
        self.out = out
        self.line = ""  # a command line from the Pi, until its newline

    def start(self):
        for line in state_lines(self.slots):
            self.out.write(line)

    def step(self, now_ms, incoming=""):
        """Update every slot, report changes, answer `?` and `GAIN n` lines in `incoming`;
        True if any tag."""
        for slot in self.slots:
            if slot.update(now_ms):
                self.out.write(encode(slot.body()))
        for char in incoming:
            if char == "?":  # answered at once, newline or not (protocol version 1)
                for line in state_lines(self.slots):
                    self.out.write(line)
            elif char == "\n":
                if self.line.startswith("GAIN"):
                    answer = gain_answer(self.slots, self.line)
                    if answer:
                        self.out.write(answer)
                self.line = ""
            elif len(self.line) < MAX_COMMAND:
                self.line += char
        return any(slot.tag is not None for slot in self.slots)


def main():
    import select

    firmware = Firmware(make_slots(READER), sys.stdout)
    led = Pin("LED", Pin.OUT)
    poller = select.poll()
    poller.register(sys.stdin, select.POLLIN)
    firmware.start()
    while True:
        try:
            incoming = ""
            for _ in range(MAX_INPUT):  # bounded: a closed stdin polls readable forever
                if not poller.poll(0):
                    break
                incoming += sys.stdin.read(1)
            led.value(firmware.step(ticks_ms(), incoming))
            time.sleep_ms(LOOP_SLEEP_MS)
        except Exception as exc:  # keep serving; tell the Pi, slowly
            sys.stdout.write(encode("ERR " + printable(repr(exc))))
            time.sleep_ms(1000)


if __name__ == "__main__":
    main()
