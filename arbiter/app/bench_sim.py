"""A simulated bench: the configured reader kind on simulated hardware, driven by commands.

``gg-arbiter monitor --sim`` runs the real reader code of ``reader.kind`` on
stand-ins for the hardware, so the monitor can be tried (and tested) with no
Pi: switches on gpiozero's MockFactory pins (``keys-gpio``), an MCP23017 that
answers on a fake I2C bus and pulls its INT pin low on a change
(``keys-mcp23017``), RDM6300 frames written to pyserial ``loop://`` ports
(``rdm6300``), and a slot microcontroller answering over a pty
(``mcu``). Commands (``help`` lists them)::

    press attacker 3        close switch 3 of the attacker slot (keys)
    release attacker 3      open it again
    code defender 1011000   set every switch of a slot (1 = closed)
    seat attacker W:COL     keys: that piece's code; RFID: its enrolled tag
    tag attacker 62E3086CED hold a tag over the slot's reader (RFID)
    bad attacker            one frame or line with a wrong checksum (RFID)
    clear attacker          take everything out (clear = both slots)
    quit
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from typing import Any

import serial

from arbiter.app.config import Config
from arbiter.errors import ArbiterError
from arbiter.hardware.pins import mock_pin_factory
from arbiter.hardware.readers.base import ReaderError, SlotReader
from arbiter.hardware.readers.mcu import encode_line
from arbiter.hardware.readers.rdm6300 import encode_frame
from arbiter.rules.keycode import DEFAULT_KEYCODE
from arbiter.rules.pieces import Piece
from arbiter.rules.verdict import Role

HELP = __doc__.split("::", 1)[1].strip("\n") if __doc__ else ""

ROLES = {"attacker": Role.ATTACKER, "a": Role.ATTACKER,
         "defender": Role.DEFENDER, "d": Role.DEFENDER}
#: How often a held tag's frame repeats, as an RDM6300 does.
FRAME_REPEAT = 0.05


class BenchCommandError(ArbiterError, ValueError):
    """A bench command that cannot be carried out; the message says why."""


class _FakeExpander:
    """An MCP23017 on a fake I2C bus: ports read the switches, a change pulls INT low.

    Reading the GPIO registers releases INT, as on the chip.
    """

    def __init__(self, release_int: Callable[[], None]) -> None:
        self.levels = 0xFFFF  # pulled up: every switch open
        self._release_int = release_int
        self._lock = threading.Lock()

    def read_i2c_block_data(self, i2c_addr: int, register: int, length: int) -> list[int]:
        with self._lock:
            levels = self.levels
        self._release_int()
        return [levels & 0xFF, levels >> 8][:length]

    def write_i2c_block_data(self, i2c_addr: int, register: int, data: list[int]) -> None:
        """Set-up writes: the fake chip is always set up."""

    def write_byte_data(self, i2c_addr: int, register: int, value: int) -> None:
        """Set-up writes: the fake chip is always set up."""


class BenchSim:
    """The readers of ``config.reader.kind`` on simulated hardware (see the module doc).

    :param tag_of: for ``seat`` on RFID: the tag enrolled to a piece text, or None.
    :raises ReaderError: for a reader kind with nothing to simulate (``sim``).
    """

    def __init__(self, config: Config, tag_of: Callable[[str], str | None] | None = None) -> None:
        self.kind = config.reader.kind
        self._tag_of = tag_of or (lambda _text: None)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._closers: list[Callable[[], None]] = []
        self._bits: dict[Role, list[bool]] = {
            role: [False] * DEFAULT_KEYCODE.switches for role in Role
        }
        self._tags: dict[Role, str | None] = {role: None for role in Role}
        self.readers: list[SlotReader]
        r = config.reader
        window, invalid_after = r.debounce_ms / 1000, r.invalid_after_ms / 1000
        if self.kind == "keys-gpio":
            from arbiter.hardware.readers.gpio_keys import gpio_key_readers

            self._factory = mock_pin_factory()
            self._pins = {Role.ATTACKER: list(r.attacker_pins),
                          Role.DEFENDER: list(r.defender_pins)}
            self.readers = list(gpio_key_readers(
                r.attacker_pins, r.defender_pins, window=window, invalid_after=invalid_after,
                pin_factory=self._factory))
        elif self.kind == "keys-mcp23017":
            from arbiter.hardware.readers.mcp23017 import Mcp23017KeyReader

            self._factory = mock_pin_factory()
            irq = r.interrupt_pin
            self._irq = self._factory.pin(irq) if irq is not None else None
            self._expander = _FakeExpander(self._release_int)
            self.readers = [Mcp23017KeyReader(
                self._expander, address=r.i2c_address, interrupt_pin=irq, window=window,
                invalid_after=invalid_after, pin_factory=self._factory)]
        elif self.kind == "rdm6300":
            from arbiter.hardware.readers.rdm6300 import Rdm6300Reader

            timeout = r.removal_timeout_ms / 1000
            self._ports = {role: serial.serial_for_url("loop://", timeout=0.05) for role in Role}
            self.readers = [
                Rdm6300Reader(role, serial_factory=_given(self._ports[role]),
                              removal_timeout=timeout)
                for role in Role
            ]
            self._spawn(self._repeat_frames, "bench rdm6300 frames")
        elif self.kind == "mcu":
            from arbiter.hardware.readers.mcu import McuReader

            master, slave = os.openpty()
            self._master = master
            name = os.ttyname(slave)
            os.close(slave)  # the reader opens it by name, as a real port
            self.readers = [McuReader(
                serial_factory=lambda: serial.Serial(name, 115200, timeout=0.05))]
            self._closers.append(lambda: os.close(master))
            self._spawn(self._answer_requests, "bench mcu")
        else:
            raise ReaderError(f"reader.kind {self.kind!r} has no hardware to simulate")

    # -- commands ------------------------------------------------------------

    def command(self, line: str) -> str:
        """Carry out one command line; returns what to print.

        :raises BenchCommandError: an unknown or malformed command.
        """
        words = line.split()
        if not words:
            return ""
        verb, args = words[0].lower(), words[1:]
        if verb == "help":
            return HELP
        if verb == "clear" and not args:
            for role in Role:
                self.clear(role)
            return "both slots cleared"
        if not args or args[0].lower() not in ROLES:
            raise BenchCommandError(f"unknown command {line.strip()!r}: try help")
        role = ROLES[args[0].lower()]
        rest = args[1:]
        if verb in ("press", "release") and len(rest) == 1 and rest[0].isdigit():
            self.switch(role, int(rest[0]), verb == "press")
        elif verb == "code" and len(rest) == 1:
            self.code(role, rest[0])
        elif verb == "seat" and len(rest) == 1:
            self.seat(role, rest[0])
        elif verb == "tag" and len(rest) == 1:
            self.tag(role, rest[0])
        elif verb == "bad" and not rest:
            self.bad(role)
        elif verb == "clear" and not rest:
            self.clear(role)
        else:
            raise BenchCommandError(f"unknown command {line.strip()!r}: try help")
        return "ok"

    def switch(self, role: Role, number: int, closed: bool) -> None:
        """Close or open one switch (1 is the first)."""
        self._need_keys()
        if not 1 <= number <= DEFAULT_KEYCODE.switches:
            raise BenchCommandError(f"switches are 1 to {DEFAULT_KEYCODE.switches}, not {number}")
        with self._lock:
            self._bits[role][number - 1] = closed
        self._apply(role)

    def code(self, role: Role, bits: str) -> None:
        """Set every switch of a slot: ``1011000`` closes 1, 3 and 4."""
        self._need_keys()
        if len(bits) != DEFAULT_KEYCODE.switches or not set(bits) <= {"0", "1"}:
            raise BenchCommandError(f"a code is {DEFAULT_KEYCODE.switches} digits 0/1: {bits!r}")
        with self._lock:
            self._bits[role] = [b == "1" for b in bits]
        self._apply(role)

    def seat(self, role: Role, text: str) -> None:
        """Seat a piece: its code (keys) or its enrolled tag (RFID)."""
        try:
            piece = Piece.parse(text)
        except ArbiterError as exc:
            raise BenchCommandError(str(exc)) from None
        if self.kind.startswith("keys"):
            self.code(role, DEFAULT_KEYCODE.codeword(piece))
            return
        tag = self._tag_of(text)
        if tag is None:
            raise BenchCommandError(f"no tag enrolled for {text}: use tag {role.value} ID")
        self.tag(role, tag)

    def tag(self, role: Role, tag: str) -> None:
        """Hold a tag (10 hex digits) over a slot's reader."""
        self._need_rfid()
        if len(tag) != 10 or not all(c in "0123456789abcdefABCDEF" for c in tag):
            raise BenchCommandError(f"a tag id is 10 hex digits: {tag!r}")
        with self._lock:
            self._tags[role] = tag.upper()
        if self.kind == "mcu":
            self._send(f"{_letter(role)} TAG {tag.upper()}")

    def bad(self, role: Role) -> None:
        """Send one frame (RDM6300) or line (mcu) with a wrong checksum."""
        self._need_rfid()
        if self.kind == "rdm6300":
            frame = bytearray(encode_frame("62E3086CED"))
            frame[11:13] = b"00"  # the right checksum is 08
            self._ports[role].write(bytes(frame))
        else:
            self._write(f"{_letter(role)} TAG 62E3086CED*00\n".encode())

    def clear(self, role: Role) -> None:
        """Take everything out of a slot."""
        with self._lock:
            self._bits[role] = [False] * DEFAULT_KEYCODE.switches
            self._tags[role] = None
        if self.kind.startswith("keys"):
            self._apply(role)
        elif self.kind == "mcu":
            self._send(f"{_letter(role)} EMPTY")

    def close(self) -> None:
        """Stop the readers and the simulated hardware; safe to call twice."""
        self._stop.set()
        for reader in self.readers:
            reader.close()
        for thread in self._threads:
            thread.join(timeout=5)
        self._threads.clear()
        for close in self._closers:
            with contextlib.suppress(OSError):
                close()
        self._closers.clear()

    # -- internals -----------------------------------------------------------

    def _need_keys(self) -> None:
        if not self.kind.startswith("keys"):
            raise BenchCommandError(f"{self.kind} reads tags, not switches: use tag or seat")

    def _need_rfid(self) -> None:
        if self.kind.startswith("keys"):
            raise BenchCommandError(f"{self.kind} reads switches: use press, code or seat")

    def _apply(self, role: Role) -> None:
        with self._lock:
            closed = list(self._bits[role])
        if self.kind == "keys-gpio":
            for pin, on in zip(self._pins[role], closed, strict=True):
                mock = self._factory.pin(pin)
                if on:
                    mock.drive_low()  # a closed switch pulls its pulled-up pin to GND
                else:
                    mock.drive_high()
            return
        # MCP23017: attacker on GPA0-6, defender on GPB0-6; closed reads 0.
        with self._lock:
            levels = 0xFFFF
            for r, shift in ((Role.ATTACKER, 0), (Role.DEFENDER, 8)):
                for i, on in enumerate(self._bits[r]):
                    if on:
                        levels &= ~(1 << (shift + i))
            self._expander.levels = levels
        if self._irq is not None:
            self._irq.drive_low()

    def _release_int(self) -> None:
        if self._irq is not None:
            self._irq.drive_high()

    def _spawn(self, target: Callable[[], None], name: str) -> None:
        thread = threading.Thread(target=target, name=name, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _repeat_frames(self) -> None:
        while not self._stop.wait(FRAME_REPEAT):
            with self._lock:
                held = dict(self._tags)
            for role, tag in held.items():
                if tag is not None:
                    with contextlib.suppress(serial.SerialException, OSError):
                        self._ports[role].write(encode_frame(tag))

    def _write(self, data: bytes) -> None:
        with contextlib.suppress(OSError):
            os.write(self._master, data)

    def _send(self, body: str) -> None:
        self._write(encode_line(body))

    def _answer_requests(self) -> None:
        """The firmware's side: answer each ``?`` with HELLO and both slots."""
        import select

        while not self._stop.is_set():
            try:
                ready, _, _ = select.select([self._master], [], [], 0.05)
                if not ready:
                    continue
                data = os.read(self._master, 256)
            except OSError:
                return
            if b"?" in data:
                self._send("HELLO gg-slots 1")
                with self._lock:
                    held = dict(self._tags)
                for role, tag in held.items():
                    self._send(f"{_letter(role)} TAG {tag}" if tag else f"{_letter(role)} EMPTY")


def _letter(role: Role) -> str:
    return "A" if role is Role.ATTACKER else "D"


def _given(port: Any) -> Callable[[], Any]:
    return lambda: port
