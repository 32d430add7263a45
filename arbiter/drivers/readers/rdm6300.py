"""RDM6300 (RDM630) 125 kHz RFID module under one slot, read over a serial port.

Wiring (one module per slot; each needs its own serial port):

- Module VCC to 5 V, GND to GND. The antenna coil lies flat under the slot;
  keep the two slots' coils apart (or shielded) or both may read one tag.
- Module TX is **5 V logic**: it must not go straight to a Pi pin. Through a
  USB-serial adapter (3.3/5 V tolerant RX), or to the Pi's RX (GPIO 15, pin 10)
  via a divider: TX -- 1 kΩ -- RX -- 2 kΩ -- GND gives 3.3 V.
  Module RX is unused (the module only sends).
- The Pi's own UART carries one module; the second needs a USB-serial adapter
  (or a Pi 4/5 extra UART, or the microcontroller of :mod:`arbiter.drivers.readers.mcu`).
  Give adapters stable names with udev (``/dev/serial/by-id/...``).

Protocol: 9600 8N1; while a tag is in the field the module repeats a 14-byte
frame about every 50 ms: STX (0x02), 10 ASCII hex digits (version byte and
4 id bytes), 2 ASCII hex digits of checksum (XOR of the 5 data bytes), ETX
(0x03). There is no removal message: the reader reports EMPTY once no valid
frame has come for ``removal_timeout`` seconds.

Reported token: the 10 hex digits, upper case (``"62E3086CED"``). When a
different tag replaces the present one with no gap, the reader reports EMPTY
and then the new PRESENT, so every change of piece passes through EMPTY.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable

import serial

from arbiter.drivers.readers.base import Clock, SlotState
from arbiter.drivers.readers.raw import RawCallback, RawKind, RawSample, emit, printable
from arbiter.drivers.readers.serialline import SerialFactory, SerialSlotReader
from arbiter.rules.verdict import Role

log = logging.getLogger(__name__)

STX = 0x02
ETX = 0x03
_HEX_DIGITS = frozenset(b"0123456789ABCDEFabcdef")
#: Hex digits of a tag id: the EM4100 version byte and 4 id bytes.
TAG_DIGITS = 10
_PAYLOAD_LENGTH = TAG_DIGITS + 2  # and 2 checksum digits



def checksum(tag_hex: str) -> str:
    """The two-digit checksum (upper case) of a 10-digit tag id: XOR of its 5 bytes.

    :raises ValueError: unless ``tag_hex`` is 10 hex digits.
    """
    if len(tag_hex) != 10:
        raise ValueError(f"an RDM6300 tag id is 10 hex digits: {tag_hex!r}")
    value = 0
    for byte in bytes.fromhex(tag_hex):
        value ^= byte
    return f"{value:02X}"


def encode_frame(tag_hex: str) -> bytes:
    """The 14-byte frame an RDM6300 sends for ``tag_hex`` (10 hex digits).

    :raises ValueError: unless ``tag_hex`` is 10 hex digits.
    """
    data = tag_hex.upper()
    return bytes([STX]) + (data + checksum(data)).encode("ascii") + bytes([ETX])


class FrameParser:
    """Turns a stream of bytes from an RDM6300 into tag ids.

    Feed any chunks; :meth:`feed` returns the ids (10 hex digits, upper case)
    of the valid frames completed by that chunk. Garbage is skipped: an STX
    always starts a new frame, anything else out of place abandons the
    current one. Lower-case hex is accepted. Frames with a wrong checksum are
    dropped and counted in :attr:`bad_checksums`; abandoned frames in
    :attr:`malformed`. ``observe`` (if given) sees every frame in order, for
    the raw watch: ``(tag id, True, "")`` or ``(bytes as text, False, reason)``.
    """

    def __init__(self, observe: Callable[[str, bool, str], None] | None = None) -> None:
        self.observe = observe
        self._payload = bytearray()
        self._in_frame = False
        self.frames = 0
        self.bad_checksums = 0
        self.malformed = 0

    def reset(self) -> None:
        """Forget any partial frame (counters are kept)."""
        self._payload.clear()
        self._in_frame = False

    def feed(self, data: Iterable[int]) -> list[str]:
        """Consume bytes; return the tag ids of frames completed by them."""
        tags: list[str] = []
        for byte in data:
            if byte == STX:
                if self._in_frame:
                    self._refused(bytes([STX]) + self._payload, "malformed")
                self._payload.clear()
                self._in_frame = True
            elif not self._in_frame:
                continue
            elif len(self._payload) < _PAYLOAD_LENGTH and byte in _HEX_DIGITS:
                self._payload.append(byte)
            elif len(self._payload) == _PAYLOAD_LENGTH and byte == ETX:
                tag = self._finish()
                if tag is not None:
                    tags.append(tag)
            else:
                self._refused(bytes([STX]) + self._payload + bytes([byte]), "malformed")
                self.reset()
        return tags

    def _refused(self, data: bytes, reason: str) -> None:
        self.malformed += 1
        if self.observe is not None:
            self.observe(printable(data), False, reason)

    def _finish(self) -> str | None:
        text = self._payload.decode("ascii").upper()
        self.reset()
        tag, received = text[:10], text[10:]
        if checksum(tag) != received:
            self.bad_checksums += 1
            if self.observe is not None:
                self.observe(f"{tag} {received} (expected {checksum(tag)})", False,
                             "bad checksum")
            return None
        self.frames += 1
        if self.observe is not None:
            self.observe(tag, True, "")
        return tag


class Rdm6300Reader(SerialSlotReader):
    """One RDM6300 module watching one slot.

    :param slot: the slot under which the module sits.
    :param port: the serial device (``/dev/ttyAMA0``, ``/dev/serial/by-id/...``)
        or a pyserial URL.
    :param serial_factory: instead of ``port``: a callable returning an open
        pyserial object (tests pass ``loop://`` or a pty).
    :param removal_timeout: seconds without a valid frame before EMPTY.
    :param reconnect_interval: seconds between attempts to reopen a failed port.
    :param clock: the monotonic clock the removal timeout is measured on.
    :raises ReaderError: with neither ``port`` nor ``serial_factory``.
    """

    def __init__(
        self,
        slot: Role,
        port: str | None = None,
        *,
        serial_factory: SerialFactory | None = None,
        baudrate: int = 9600,
        removal_timeout: float = 0.3,
        reconnect_interval: float = 1.0,
        clock: Clock = time.monotonic,
    ) -> None:
        super().__init__(
            (slot,),
            port,
            serial_factory,
            baudrate,
            reconnect_interval,
            kind=f"RDM6300 {slot.value}",
            clock=clock,
        )
        self._slot = slot
        self._removal_timeout = removal_timeout
        self._parser = FrameParser(observe=self._frame_seen)
        self._raw: RawCallback | None = None
        self._now = 0.0
        self._tag: str | None = None
        self._seen_at = 0.0

    @property
    def frames(self) -> int:
        """Valid frames received so far, repeats of a present tag included."""
        return self._parser.frames

    @property
    def bad_checksums(self) -> int:
        """Frames dropped for a wrong checksum (a sign of noise or a failing module)."""
        return self._parser.bad_checksums

    def watch_raw(self, callback: RawCallback | None) -> None:
        """Show every frame: each valid tag id (repeats too) and each refused frame."""
        self._raw = callback

    def _frame_seen(self, text: str, ok: bool, reason: str) -> None:
        emit(self._raw, RawSample(RawKind.FRAME, self._slot, text, ok, reason, self._now))

    def _on_connect(self, port: serial.SerialBase, now: float) -> None:
        self._parser.reset()
        self._tag = None
        self._set(self._slot, SlotState.EMPTY)

    def _on_data(self, data: bytes, now: float) -> None:
        self._now = now
        tags = self._parser.feed(data)
        if tags:
            self._tag = tags[-1]
            self._seen_at = now
            self._set(self._slot, SlotState.PRESENT, self._tag)

    def _on_tick(self, now: float) -> None:
        if self._tag is not None and now - self._seen_at >= self._removal_timeout:
            self._tag = None
            self._set(self._slot, SlotState.EMPTY)
