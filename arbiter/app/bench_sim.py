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
    tag attacker 04A1B2C3D48E80
                            put a tag in the slot: mcu takes an RC522's 8, 14
                            (NTAG213 stickers) or 20 hex digits, or 10;
                            rdm6300 takes 10
    height attacker 25      mcu: lift that slot's tag 25 mm above the slot floor
                            (it reads as the simulator's read-range model says)
    bad attacker            one frame or line with a wrong checksum (RFID)
    clear attacker          take everything out (clear = both slots)
    quit
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import serial

from arbiter.app.assembly import tag_lengths
from arbiter.app.config import Config
from arbiter.app.errors import BenchCommandError
from arbiter.drivers.fakes import FakeMcp23017, FakePico, FakeRdm6300
from arbiter.drivers.pins import mock_pin_factory
from arbiter.drivers.readers.base import SlotReader
from arbiter.drivers.readers.errors import ReaderError, SimTagError
from arbiter.drivers.readers.sim import check_tag
from arbiter.errors import ArbiterError
from arbiter.rules.keycode import DEFAULT_KEYCODE
from arbiter.rules.pieces import Piece
from arbiter.rules.verdict import Role

HELP = __doc__.split("::", 1)[1].strip("\n") if __doc__ else ""

ROLES = {"attacker": Role.ATTACKER, "a": Role.ATTACKER,
         "defender": Role.DEFENDER, "d": Role.DEFENDER}


class BenchSim:
    """The readers of ``config.reader.kind`` on simulated hardware (see the module doc).

    :param tag_of: for ``seat`` on RFID: the tag enrolled to a piece text, or None.
    :raises ReaderError: for a reader kind with nothing to simulate (``sim``).
    """

    def __init__(self, config: Config, tag_of: Callable[[str], str | None] | None = None) -> None:
        self.kind = config.reader.kind
        self._tag_of = tag_of or (lambda _text: None)
        self._lock = threading.Lock()
        self._closers: list[Callable[[], None]] = []
        self._bits: dict[Role, list[bool]] = {
            role: [False] * DEFAULT_KEYCODE.switches for role in Role
        }
        self._tags: dict[Role, str | None] = {role: None for role in Role}
        self.readers: list[SlotReader]
        r = config.reader
        window, invalid_after = r.debounce_ms / 1000, r.invalid_after_ms / 1000
        if self.kind == "keys-gpio":
            from arbiter.drivers.readers.gpio_keys import gpio_key_readers

            self._factory = mock_pin_factory()
            self._pins = {Role.ATTACKER: list(r.attacker_pins),
                          Role.DEFENDER: list(r.defender_pins)}
            self.readers = list(gpio_key_readers(
                r.attacker_pins, r.defender_pins, window=window, invalid_after=invalid_after,
                pin_factory=self._factory))
        elif self.kind == "keys-mcp23017":
            from arbiter.drivers.readers.mcp23017 import Mcp23017KeyReader

            self._factory = mock_pin_factory()
            irq = r.interrupt_pin
            self._irq = self._factory.pin(irq) if irq is not None else None
            self._expander = FakeMcp23017(r.i2c_address, int_pin=self._irq)
            self.readers = [Mcp23017KeyReader(
                self._expander, address=r.i2c_address, interrupt_pin=irq, window=window,
                invalid_after=invalid_after, pin_factory=self._factory)]
        elif self.kind == "rdm6300":
            from arbiter.drivers.readers.rdm6300 import Rdm6300Reader

            timeout = r.removal_timeout_ms / 1000
            ports = {role: serial.serial_for_url("loop://", timeout=0.05) for role in Role}
            self._rdm = {role: FakeRdm6300(ports[role], name=f"rdm6300 {role.value}")
                         for role in Role}
            self._closers.extend(fake.close for fake in self._rdm.values())
            self.readers = [
                Rdm6300Reader(role, serial_factory=_given(ports[role]), removal_timeout=timeout)
                for role in Role
            ]
        elif self.kind == "mcu":
            from arbiter.drivers.readers.mcu import McuReader

            self._pico = FakePico()
            name = self._pico.path  # the reader opens it by name, as a real port
            self.readers = [McuReader(
                serial_factory=lambda: serial.Serial(name, 115200, timeout=0.05),
                rx_gain_db=r.rx_gain_db)]
            self._closers.append(self._pico.unplug)
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
        elif verb == "height" and len(rest) == 1:
            self.height(role, rest[0])
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
        """Put a tag in a slot, seated: as many hex digits as the reader kind sends."""
        self._need_rfid()
        try:
            tag = check_tag(tag, tag_lengths(self.kind), self.kind)
        except SimTagError as exc:
            raise BenchCommandError(str(exc)) from None
        with self._lock:
            self._tags[role] = tag
        if self.kind == "mcu":
            self._pico.place(_letter(role), tag, 0.0)
        else:
            self._rdm[role].hold(tag)

    def height(self, role: Role, text: str) -> None:
        """Lift the tag in a slot to ``text`` mm above the slot floor (mcu)."""
        if self.kind != "mcu":
            raise BenchCommandError("height is for the mcu reader (its RC522 read range)")
        try:
            mm = float(text)
        except ValueError:
            mm = -1.0
        if not 0 <= mm <= 200:
            raise BenchCommandError(f"a height is 0 to 200 mm above the slot floor: {text!r}")
        if _letter(role) not in self._pico.stickers:
            raise BenchCommandError(f"no tag in the {role.value} slot: tag {role.value} ID first")
        self._pico.lift(_letter(role), mm)

    def bad(self, role: Role) -> None:
        """Send one frame (RDM6300) or line (mcu) with a wrong checksum."""
        self._need_rfid()
        if self.kind == "rdm6300":
            self._rdm[role].bad_frame("62E3086CED")  # its right checksum is 08
        else:
            self._pico.raw(f"{_letter(role)} TAG 62E3086CED*00\n".encode())

    def clear(self, role: Role) -> None:
        """Take everything out of a slot."""
        with self._lock:
            self._bits[role] = [False] * DEFAULT_KEYCODE.switches
            self._tags[role] = None
        if self.kind.startswith("keys"):
            self._apply(role)
        elif self.kind == "mcu":
            self._pico.place(_letter(role), None)
        else:
            self._rdm[role].hold(None)

    def close(self) -> None:
        """Stop the readers and the simulated hardware; safe to call twice."""
        for reader in self.readers:
            reader.close()
        for close in self._closers:
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
        self._expander.set_levels(levels)


def _letter(role: Role) -> str:
    return "A" if role is Role.ATTACKER else "D"


def _given(port: Any) -> Callable[[], Any]:
    return lambda: port
