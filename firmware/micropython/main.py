"""gg-slots firmware: a Raspberry Pi Pico reads two RDM6300 modules and reports both
slots to the arbiter over USB serial (protocol: firmware/PROTOCOL.md).

Wiring (details in README.md beside this file):
  ATTACKER RDM6300 TX -> divider (1k over 2k to GND) -> GP1 (UART0 RX)
  DEFENDER RDM6300 TX -> divider (1k over 2k to GND) -> GP5 (UART1 RX)
  both modules: VCC -> VBUS (5 V, pin 40), GND -> GND
The modules' TX is 5 V logic; RP2040 pins are not 5 V tolerant: keep the dividers.

MicroPython code: it also imports under CPython (with a stub `machine`
module) so that tests can check the parser, the line format and the slot
logic; the main loop only runs on the board.
"""

import sys
import time

from machine import UART, Pin

PROTOCOL = "gg-slots"
VERSION = 1
REMOVAL_MS = 300  # no valid frame for this long: the tag has left
LOOP_SLEEP_MS = 5
STX = 0x02
ETX = 0x03

try:
    ticks_ms = time.ticks_ms
    ticks_diff = time.ticks_diff
except AttributeError:  # CPython, for the tests

    def ticks_ms():
        return int(time.monotonic() * 1000)

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

    Same rules as arbiter.hardware.readers.rdm6300.FrameParser: STX starts a frame,
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


class Slot:
    """One slot: an RDM6300 on a UART, its parser and the tag seen last."""

    def __init__(self, letter, uart):
        self.letter = letter
        self.uart = uart
        self.parser = FrameParser()
        self.tag = None
        self.seen_ms = 0

    def update(self, now_ms):
        """Read what the module sent; True if the slot's state changed."""
        count = self.uart.any()
        data = self.uart.read(count) if count else None
        tags = self.parser.feed(data) if data else []
        if tags:
            self.seen_ms = now_ms
            if tags[-1] != self.tag:
                self.tag = tags[-1]
                return True
        elif self.tag is not None and ticks_diff(now_ms, self.seen_ms) >= REMOVAL_MS:
            self.tag = None
            return True
        return False

    def body(self):
        if self.tag is None:
            return self.letter + " EMPTY"
        return self.letter + " TAG " + self.tag


def state_lines(slots):
    """The full-state answer: HELLO, then one line per slot."""
    lines = [encode("HELLO %s %d" % (PROTOCOL, VERSION))]
    for slot in slots:
        lines.append(encode(slot.body()))
    return lines


def commands(text):
    """How many state requests ('?') a chunk of input holds; other bytes are ignored."""
    return text.count("?")


def main():
    import select

    slots = [
        Slot("A", UART(0, baudrate=9600, tx=Pin(0), rx=Pin(1), rxbuf=256)),
        Slot("D", UART(1, baudrate=9600, tx=Pin(4), rx=Pin(5), rxbuf=256)),
    ]
    led = Pin("LED", Pin.OUT)
    out = sys.stdout
    poller = select.poll()
    poller.register(sys.stdin, select.POLLIN)
    for line in state_lines(slots):
        out.write(line)
    while True:
        try:
            now = ticks_ms()
            for slot in slots:
                if slot.update(now):
                    out.write(encode(slot.body()))
            asked = 0
            while poller.poll(0):
                asked += commands(sys.stdin.read(1))
            if asked:
                for line in state_lines(slots):
                    out.write(line)
            led.value(any(slot.tag is not None for slot in slots))
            time.sleep_ms(LOOP_SLEEP_MS)
        except Exception as exc:  # keep serving; tell the Pi, slowly
            out.write(encode("ERR " + printable(repr(exc))))
            time.sleep_ms(1000)


if __name__ == "__main__":
    main()
