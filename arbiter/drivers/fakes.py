"""Stand-ins for the readers' hardware, shipped beside the real drivers (as gpiozero
ships ``pins/mock.py``): the simulated bench (``gg-arbiter monitor --sim``) and the
tests drive the real reader code through them.

- :class:`FakeMcp23017`: an MCP23017 on an SMBus, register by register as the
  datasheet says (IOCON.BANK = 0), pulling its INT pin low on a change;
- :class:`FakeRdm6300`: an RDM6300 writing the held tag's frame every 50 ms to a
  serial port (a pyserial ``loop://`` port or a pty);
- :class:`FakePico`: the slot microcontroller's firmware on the master side of a
  pty, answering ``?`` with the state of both slots and ``GAIN <dB>`` as the RC522
  firmware does; stickers put at a height with :meth:`FakePico.place` read as
  :class:`~arbiter.drivers.readrange.ReadRangeModel` says.

The INT pin and ports are duck-typed: a gpiozero mock pin (``drive_low``,
``drive_high``) and anything with ``write(bytes)``.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
from typing import Protocol

from arbiter.drivers.readers.mcu import RX_GAINS_DB, encode_line
from arbiter.drivers.readers.rdm6300 import encode_frame
from arbiter.drivers.readrange import RESET_GAIN_DB, ReadRangeModel
from arbiter.threads import BackgroundThread, declare

FAKE_READER = declare("fake reader", __name__,
                      "sends a simulated RDM6300's frames while a tag is held (tests and bench)")
FAKE_PICO = declare("fake pico", __name__,
                    "answers as the slot microcontroller would (tests and bench)")

# Datasheet (IOCON.BANK = 0) register addresses of the MCP23017.
IODIRA, IPOLA, GPINTENA, INTCONA, IOCON, GPPUA, GPIOA = 0x00, 0x02, 0x04, 0x08, 0x0A, 0x0C, 0x12
MIRROR = 1 << 6
#: How often a held tag's frame repeats, as an RDM6300 does.
FRAME_REPEAT = 0.05


class DrivenPin(Protocol):
    """A pin a fake drives: a gpiozero ``MockPin``."""

    def drive_low(self) -> None: ...

    def drive_high(self) -> None: ...


class Port(Protocol):
    """Where a fake reader writes: a pyserial port, or a pty's master wrapped."""

    def write(self, data: bytes) -> int | None: ...


class FakeMcp23017:
    """An MCP23017 on an SMBus: register file with power-on values, pin levels set
    by the caller, interrupt-on-change on INTA (port B too when IOCON.MIRROR is set)
    driving ``int_pin`` low, cleared by reading GPIO.

    Records every access (``writes``, ``reads``); ``fail`` makes it stop answering
    (``unanswered`` counts the accesses refused), as a chip off the bus does.
    """

    def __init__(self, address: int = 0x20, int_pin: DrivenPin | None = None) -> None:
        self.address = address
        self.regs = [0] * 0x16
        self.regs[0x00] = self.regs[0x01] = 0xFF  # IODIR resets to inputs
        self.levels = 0xFFFF  # all lines high: switches open, pulled up
        self.writes: list[tuple[int, int, list[int]]] = []
        self.reads: list[tuple[int, int, int]] = []
        self.fail = False
        self.unanswered = 0
        self.release_on_read = True
        self.int_pin = int_pin
        self._lock = threading.RLock()

    def _answer(self, addr: int) -> None:
        if self.fail or addr != self.address:
            self.unanswered += 1
            raise OSError(121, "Remote I/O error")

    def write_byte_data(self, addr: int, reg: int, value: int) -> None:
        with self._lock:
            self._answer(addr)
            self.writes.append((addr, reg, [value]))
            self.regs[reg] = value

    def write_i2c_block_data(self, addr: int, reg: int, data: list[int]) -> None:
        with self._lock:
            self._answer(addr)
            self.writes.append((addr, reg, list(data)))
            for i, value in enumerate(data):
                self.regs[reg + i] = value

    def read_i2c_block_data(self, addr: int, reg: int, length: int) -> list[int]:
        with self._lock:
            self._answer(addr)
            self.reads.append((addr, reg, length))
            out = []
            for r in range(reg, reg + length):
                if r == GPIOA:
                    out.append(self.levels & 0xFF)
                elif r == GPIOA + 1:
                    out.append(self.levels >> 8)
                else:
                    out.append(self.regs[r])
            if GPIOA in range(reg, reg + length) and self.release_on_read and self.int_pin:
                self.int_pin.drive_high()  # reading GPIO clears the interrupt
            return out

    def set_levels(self, levels: int) -> None:
        """Set all 16 lines (bit 0 = GPA0; a closed switch reads 0)."""
        with self._lock:
            changed = self.levels ^ levels
            self.levels = levels
            enabled = self.regs[GPINTENA] | (self.regs[GPINTENA + 1] << 8)
            intcon = self.regs[INTCONA] | (self.regs[INTCONA + 1] << 8)
            watched = enabled & ~intcon  # interrupt on change from the previous value
            if not self.regs[IOCON] & MIRROR:
                watched &= 0x00FF  # INTA sees port A only
            if changed & watched and self.int_pin is not None:
                self.int_pin.drive_low()  # open drain, active low

    def seat(self, bits: list[int], word: str) -> None:
        """Close the switches of ``word`` ("1011000") on expander ``bits`` (0 = GPA0)."""
        with self._lock:
            levels = self.levels
            for bit, c in zip(bits, word, strict=True):
                levels = levels & ~(1 << bit) if c == "1" else levels | (1 << bit)
            self.set_levels(levels)


class FakeRdm6300:
    """An RDM6300 over ``port``: while a tag is held, its frame every ``repeat`` s;
    nothing when it is taken away (the real module has no removal message)."""

    def __init__(self, port: Port, repeat: float = FRAME_REPEAT, name: str = "rdm6300") -> None:
        self._port = port
        self._repeat = repeat
        self._lock = threading.Lock()
        self._tag: str | None = None
        self._thread = BackgroundThread(self._run, FAKE_READER, label=f"fake {name}")
        self._thread.start()

    @property
    def tag(self) -> str | None:
        with self._lock:
            return self._tag

    def hold(self, tag: str | None) -> None:
        """Hold ``tag`` (10 hex digits) over the antenna; None takes it away."""
        with self._lock:
            self._tag = tag.upper() if tag else None

    def bad_frame(self, tag: str = "62E3086CED") -> None:
        """Send one frame of ``tag`` with a wrong checksum."""
        frame = bytearray(encode_frame(tag))
        good = frame[11:13]
        frame[11:13] = b"00" if good != b"00" else b"FF"
        self._write(bytes(frame))

    def close(self) -> None:
        """Stop sending; safe to call twice."""
        self._thread.stop()

    def _write(self, data: bytes) -> None:
        # A closed port (the reader unplugged, the test over) ends the frames, not the test.
        with contextlib.suppress(OSError, ValueError):
            self._port.write(data)

    def _run(self, stopping: threading.Event) -> None:
        while not stopping.wait(self._repeat):
            tag = self.tag
            if tag is not None:
                self._write(encode_frame(tag))


class PtyPort:
    """The master side of a pty as a :class:`Port`; ``name`` is the slave's device path,
    which a reader opens as it opens a real serial port."""

    def __init__(self) -> None:
        self.master, slave = os.openpty()
        self.name = os.ttyname(slave)
        os.close(slave)

    def write(self, data: bytes) -> int:
        return os.write(self.master, data)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.master)


class FakePico:
    """The slot microcontroller (firmware/PROTOCOL.md) on a pty: answers each ``?``
    with ``HELLO gg-slots 1`` and both slots' state; :meth:`set` reports a change.

    ``path`` is the port a reader opens; ``answering=False`` plays a board that
    stays silent; ``requests`` counts the ``?`` seen. :meth:`unplug` closes the pty
    as a pulled USB cable does. With ``rc522`` (the flagship) it takes ``GAIN <dB>``
    as the firmware does (``gain_db``, answered ``GAIN <dB>``), and stickers put with
    :meth:`place` read in a slot as ``model`` says at that gain (two in one slot's
    reach collide: no reading, as on an RC522).
    """

    def __init__(self, answering: bool = True, *, rc522: bool = True,
                 model: ReadRangeModel | None = None) -> None:
        self.master, self.slave = os.openpty()
        self.path = os.ttyname(self.slave)
        self.answering = answering
        self.rc522 = rc522
        self.model = model or ReadRangeModel()
        self.gain_db = RESET_GAIN_DB
        self.state: dict[str, str | None] = {"A": None, "D": None}
        #: Stickers held over a slot: letter -> (tag, height above the slot floor, mm).
        self.stickers: dict[str, tuple[str, float]] = {}
        self.requests = 0
        self._line = b""
        self._write_lock = threading.Lock()
        # A change and a full state are each written whole: a state read before a
        # change and written after it would undo the change on the reader's side.
        self._state_lock = threading.RLock()
        self._thread = BackgroundThread(self._serve, FAKE_PICO)
        self._thread.start()

    def _serve(self, stopping: threading.Event) -> None:
        while not stopping.is_set():
            try:
                ready, _, _ = select.select([self.master], [], [], 0.05)
                if not ready or stopping.is_set():
                    continue
                data = os.read(self.master, 256)
            except OSError:
                return
            for byte in data:
                if byte == ord("?"):
                    self.requests += 1
                    if self.answering:
                        self.send_state()
                elif byte == ord("\n"):
                    self._command(self._line.decode("ascii", "replace"))
                    self._line = b""
                elif len(self._line) < 16:
                    self._line += bytes((byte,))

    def _command(self, line: str) -> None:
        words = line.split()
        if not (self.rc522 and self.answering and words and words[0] == "GAIN"):
            return
        db = int(words[1]) if len(words) == 2 and words[1].isdigit() else -1
        if db not in RX_GAINS_DB:
            gains = " ".join(map(str, RX_GAINS_DB))
            self.line(f"ERR GAIN {' '.join(words[1:])}: not one of {gains}")
            return
        self.gain_db = db
        self.line(f"GAIN {db}")
        self._read_stickers()

    def place(self, letter: str, tag: str | None, height_mm: float = 0.0) -> None:
        """Hold sticker ``tag`` ``height_mm`` above slot ``letter``'s floor (0: a seated
        piece; None: take it away); each slot reports what it now reads."""
        if tag is None:
            self.stickers.pop(letter, None)
        else:
            self.stickers[letter] = (tag.upper(), height_mm)
        self._read_stickers()

    def lift(self, letter: str, height_mm: float) -> None:
        """Move the sticker over slot ``letter`` to ``height_mm`` above its floor."""
        tag, _ = self.stickers[letter]
        self.place(letter, tag, height_mm)

    def _read_stickers(self) -> None:
        for slot in ("A", "D"):
            heard = {tag for over, (tag, height) in self.stickers.items()
                     if self.model.reads(self.gain_db, height, other_slot=over != slot)}
            tag = heard.pop() if len(heard) == 1 else None  # two tags collide: no reading
            if tag != self.state[slot]:
                self.set(slot, tag)

    def raw(self, data: bytes) -> None:
        """Write bytes as they are (a garbled line, half a line)."""
        with self._write_lock, contextlib.suppress(OSError):
            os.write(self.master, data)

    def line(self, body: str) -> None:
        """Send one protocol line with its checksum."""
        self.raw(encode_line(body))

    def set(self, letter: str, tag: str | None) -> None:
        """Slot ``letter`` ("A" or "D") now holds ``tag`` (None: empty); report it."""
        with self._state_lock:  # never between a full state's reading and its writing
            self.state[letter] = tag.upper() if tag else None
            self.line(self._body(letter))

    def _body(self, letter: str) -> str:
        tag = self.state[letter]
        return f"{letter} EMPTY" if tag is None else f"{letter} TAG {tag}"

    def send_state(self) -> None:
        with self._state_lock:
            self.line("HELLO gg-slots 1")
            self.line(self._body("A"))
            self.line(self._body("D"))

    def unplug(self) -> None:
        """Close both ends, as a pulled cable does; safe to call twice."""
        if self._thread.stopping.is_set():
            return
        self._thread.stop()
        for fd in (self.master, self.slave):
            with contextlib.suppress(OSError):
                os.close(fd)

