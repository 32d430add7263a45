"""A microcontroller reporting both slots over one USB serial line.

Wiring: the microcontroller (a Raspberry Pi Pico running
``firmware/pico/main.py``, with an RDM6300 under each slot) plugs into
any USB port of the Pi; it is powered by USB and appears as ``/dev/ttyACM0``
(give it a stable name with udev or use ``/dev/serial/by-id/...``). No level
shifting on the Pi side: it is all USB. The module wiring is in
``firmware/pico/README.md``.

The line protocol is specified in ``firmware/PROTOCOL.md``; in short, each
line is ``BODY*HH`` with ``HH`` the CRC-8 of ``BODY``: ``HELLO gg-slots 1``,
``A TAG 62E3086CED`` (RDM6300; an RC522 sends 8, 14 or 20 hex digits),
``A EMPTY``, ``D TAG ...``, ``D EMPTY``, ``ERR text``, ``GAIN 33``.
The Pi sends ``?`` to ask for the full state, and ``GAIN <dB>`` (RC522 receiver
gain, ``rx_gain_db``) before each request, so a restarted board gets it again.
Garbled lines are counted and ignored; they never produce a reading.

The reader asks for the state on connect and every ``poll_interval``
seconds; with no valid line within ``answer_timeout`` of a request both slots
are reported FAULT (a hung firmware keeps its USB port open). An unplugged or
unopenable port is FAULT too, retried every ``reconnect_interval``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import serial

from arbiter.drivers.readers.base import Clock, SlotState
from arbiter.drivers.readers.errors import McuLineError, ReaderError
from arbiter.drivers.readers.raw import RawCallback, RawKind, RawSample, emit, printable
from arbiter.drivers.readers.serialline import SerialFactory, SerialSlotReader
from arbiter.rules.verdict import Role

log = logging.getLogger(__name__)

PROTOCOL_NAME = "gg-slots"
PROTOCOL_VERSION = 1
#: Lines longer than this (without the newline) are garbage.
MAX_LINE = 80
#: Hex digits a tag id may have: 8, 14 or 20 (4-, 7- or 10-byte ISO 14443-A UIDs from
#: an RC522; NTAG stickers have 7 bytes) or 10 (an RDM6300's EM4100 version byte + id).
TAG_LENGTHS = frozenset((8, 10, 14, 20))
#: What the Pi sends to ask for the full state.
STATE_REQUEST = b"?\n"
#: The RC522 receiver gains (RFCfgReg RxGain) in dB; 33 is the chip's reset value.
RX_GAINS_DB = (18, 23, 33, 38, 43, 48)

_SLOT_LETTERS: dict[str, Role] = {"A": Role.ATTACKER, "D": Role.DEFENDER}
_HEX = frozenset("0123456789ABCDEF")
_HEX_BYTES = frozenset(b"0123456789ABCDEF")


@dataclass(frozen=True)
class SlotMessage:
    """``A TAG <id>`` (token set) or ``A EMPTY`` (token None)."""

    slot: Role
    token: str | None


@dataclass(frozen=True)
class HelloMessage:
    """``HELLO <protocol> <version>``: sent at boot and before each full state."""

    protocol: str
    version: int


@dataclass(frozen=True)
class ErrorMessage:
    """``ERR <text>``: the microcontroller reports a problem of its own."""

    text: str


@dataclass(frozen=True)
class GainMessage:
    """``GAIN <dB>``: the RC522 boards' receiver gain is now set to this."""

    db: int


McuMessage = SlotMessage | HelloMessage | ErrorMessage | GainMessage


def crc8(data: bytes) -> int:
    """CRC-8/SMBUS: polynomial 0x07, initial value 0, no reflection (check 0xF4)."""
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = ((crc << 1) ^ 0x07) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
    return crc


def encode_line(body: str) -> bytes:
    """A protocol line for ``body``: ``BODY*HH\\n``."""
    raw = body.encode("ascii")
    return raw + f"*{crc8(raw):02X}\n".encode("ascii")


def decode_line(line: bytes) -> McuMessage:
    """Read one line (without its newline; a trailing CR is allowed).

    :raises McuLineError: for anything that is not a valid protocol line.
    """
    line = line.rstrip(b"\r")
    body, star, check = line.rpartition(b"*")
    if not star or len(check) != 2 or not set(check) <= _HEX_BYTES:
        raise McuLineError(f"no checksum: {line!r}")
    try:
        text = body.decode("ascii")
    except UnicodeDecodeError:
        raise McuLineError(f"not ASCII: {line!r}") from None
    if crc8(body) != int(check, 16):
        raise McuLineError(f"checksum mismatch: {line!r}")
    words = text.split(" ")
    if words[0] in _SLOT_LETTERS:
        slot = _SLOT_LETTERS[words[0]]
        if words[1:] == ["EMPTY"]:
            return SlotMessage(slot, None)
        if len(words) == 3 and words[1] == "TAG" and _is_tag(words[2]):
            return SlotMessage(slot, words[2])
    elif words[0] == "HELLO" and len(words) == 3 and words[2].isdigit():
        return HelloMessage(words[1], int(words[2]))
    elif words[0] == "GAIN" and len(words) == 2 and words[1].isdigit():
        return GainMessage(int(words[1]))
    elif words[0] == "ERR" and len(words) >= 2 and text.isprintable():
        return ErrorMessage(text[4:])
    raise McuLineError(f"unknown line: {text!r}")


def _is_tag(word: str) -> bool:
    return len(word) in TAG_LENGTHS and set(word) <= _HEX


def check_rx_gain(db: int) -> int:
    """``db`` if it is an RC522 receiver gain.

    :raises ReaderError: for any other value.
    """
    if db not in RX_GAINS_DB:
        raise ReaderError(f"RC522 receiver gain {db} dB: it is one of "
                          f"{', '.join(map(str, RX_GAINS_DB))} dB")
    return db


class McuReader(SerialSlotReader):
    """Both slots, read by a microcontroller on one serial line.

    :param port: the serial device (``/dev/ttyACM0``) or a pyserial URL.
    :param serial_factory: instead of ``port``: a callable returning an open
        pyserial object (tests pass ``loop://`` or a pty).
    :param baudrate: irrelevant over USB CDC; matters over a real UART.
    :param reconnect_interval: seconds between attempts to reopen a failed port.
    :param poll_interval: seconds between state requests while all is well.
    :param answer_timeout: seconds to wait for an answer before reporting FAULT.
    :param clock: the monotonic clock polls and answer timeouts are measured on.
    :param rx_gain_db: the RC522 receiver gain to set (sent before each state request);
        None leaves the firmware's own.
    :raises ReaderError: with neither ``port`` nor ``serial_factory``, or a gain the
        RC522 has not.
    """

    def __init__(
        self,
        port: str | None = None,
        *,
        serial_factory: SerialFactory | None = None,
        baudrate: int = 115200,
        reconnect_interval: float = 1.0,
        poll_interval: float = 5.0,
        answer_timeout: float = 2.0,
        clock: Clock = time.monotonic,
        rx_gain_db: int | None = None,
    ) -> None:
        if poll_interval <= 0 or answer_timeout <= 0:
            raise ReaderError("microcontroller: poll_interval and answer_timeout must be positive")
        super().__init__(
            (Role.ATTACKER, Role.DEFENDER),
            port,
            serial_factory,
            baudrate,
            reconnect_interval,
            kind="slot microcontroller",
            clock=clock,
        )
        self._poll_interval = poll_interval
        self._answer_timeout = answer_timeout
        self._buffer = bytearray()
        self._discarding = False
        self._port: serial.SerialBase | None = None
        self._asked_at: float | None = None
        self._last_ask = 0.0
        self._silent = False
        self._incompatible: str | None = None
        self.garbled_lines = 0
        self.error_lines = 0
        self.last_error = ""
        self._raw: RawCallback | None = None
        self._rx_gain = None if rx_gain_db is None else check_rx_gain(rx_gain_db)
        self._gain_due = False
        #: The gain the firmware last confirmed (``GAIN`` line), None before that.
        self.rx_gain_confirmed: int | None = None

    @property
    def rx_gain_db(self) -> int | None:
        return self._rx_gain

    def set_rx_gain(self, db: int) -> None:
        """Set the RC522 boards' receiver gain now (sent on the reader's next tick).

        :raises ReaderError: a gain the RC522 has not.
        """
        self._rx_gain = check_rx_gain(db)
        self.rx_gain_confirmed = None
        self._gain_due = True

    def watch_raw(self, callback: RawCallback | None) -> None:
        """Show every line from the microcontroller: valid ones and garbled ones."""
        self._raw = callback

    def _on_connect(self, port: serial.SerialBase, now: float) -> None:
        self._buffer.clear()
        self._discarding = False
        self._port = port
        self._asked_at = None
        self._silent = False
        self._incompatible = None
        for slot in self.slots:
            self._set(slot, SlotState.EMPTY)
        self._ask(now)

    def _ask(self, now: float) -> None:
        assert self._port is not None
        self._gain_due = False
        gain = b"" if self._rx_gain is None else f"GAIN {self._rx_gain}\n".encode()
        self._port.write(gain + STATE_REQUEST)
        self._last_ask = now
        if self._asked_at is None:
            self._asked_at = now

    def _on_tick(self, now: float) -> None:
        if self._gain_due and self._port is not None:
            self._ask(now)
            return
        if self._asked_at is None:
            if now - self._last_ask >= self._poll_interval:
                self._ask(now)
            return
        if now - self._asked_at >= self._answer_timeout:
            self._silent = True
            self._fault(f"{self._label} is not answering")
            if now - self._last_ask >= self._reconnect_interval:
                self._ask(now)

    def _on_data(self, data: bytes, now: float) -> None:
        self._buffer += data
        while True:
            end = self._buffer.find(b"\n")
            if end < 0:
                break
            line = bytes(self._buffer[:end])
            del self._buffer[: end + 1]
            if self._discarding:
                self._discarding = False
                continue
            self._handle_line(line, now)
        if len(self._buffer) > MAX_LINE:
            self._buffer.clear()
            if not self._discarding:
                self.garbled_lines += 1
                emit(self._raw, RawSample(RawKind.LINE, None, "(line too long)", False,
                                          "garbled", now))
            self._discarding = True

    def _handle_line(self, line: bytes, now: float) -> None:
        if not line.strip():
            return
        try:
            message = decode_line(line) if len(line) <= MAX_LINE else None
        except McuLineError as exc:
            message = None
            log.debug("%s: %s", self._label, exc)
        text = printable(line)
        if message is None:
            self.garbled_lines += 1
            emit(self._raw, RawSample(RawKind.LINE, None, text, False, "garbled", now))
            return
        slot = message.slot if isinstance(message, SlotMessage) else None
        emit(self._raw, RawSample(RawKind.LINE, slot, text, True, "", now))
        self._asked_at = None
        if self._silent:
            # Back after a silence: ask for the whole state, not just this line.
            self._silent = False
            self._ask(now)
        if isinstance(message, HelloMessage):
            self._hello(message)
        elif isinstance(message, GainMessage):
            self.rx_gain_confirmed = message.db
        elif isinstance(message, ErrorMessage):
            self.error_lines += 1
            self.last_error = message.text
            log.warning("%s reports: %s", self._label, message.text)
        elif self._incompatible is not None:
            self._fault(self._incompatible)
        elif message.token is None:
            self._set(message.slot, SlotState.EMPTY)
        else:
            self._set(message.slot, SlotState.PRESENT, message.token)

    def _hello(self, message: HelloMessage) -> None:
        if message.protocol == PROTOCOL_NAME and message.version == PROTOCOL_VERSION:
            self._incompatible = None
            return
        self._incompatible = (
            f"{self._label} speaks {message.protocol} {message.version}, "
            f"this arbiter needs {PROTOCOL_NAME} {PROTOCOL_VERSION}"
        )
        self._fault(self._incompatible)
