"""``gg-arbiter selftest --range``: the RC522 flagship's read-range check, in a terminal.

The builder stands a ruler in a slot and holds one piece's sticker (enrolled or not)
flat over it at each height the check names, pressing Enter once it is there; the
check reads both slots each time (:mod:`arbiter.device.rangecheck`) and ends with
where each slot reads, any cross-read, a gain to use, and PASS or FAIL. With
``--sim`` the simulated Pico (:class:`arbiter.drivers.fakes.FakePico`, its read
range as :class:`arbiter.drivers.readrange.ReadRangeModel` states) holds the
sticker, through the same reader code as the real board.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

from arbiter.app.config import Config
from arbiter.app.errors import CheckStoppedError, CliError
from arbiter.app.stopping import StopRequests, lines_until
from arbiter.device.rangecheck import judge, run_steps
from arbiter.drivers.fakes import FakePico
from arbiter.drivers.readers.base import SlotReading, SlotState
from arbiter.drivers.readers.mcu import McuReader
from arbiter.drivers.readrange import ReadRangeModel
from arbiter.errors import ArbiterError
from arbiter.rules.verdict import Role

#: Seconds a held sticker is read for: the firmware polls every 50 ms and reports a
#: tag gone after 300 ms; the Pi's reader sees it within a line.
HOLD_SECONDS = 0.8
#: Seconds to wait for the board's first answer and its GAIN confirmation.
ANSWER_SECONDS = 5.0
#: The simulated sticker: an NTAG213-like UID.
SIM_STICKER = "04A1B2C3D48E80"


class SlotWatch:
    """Both slots' current readings, and the slots that read a tag since :meth:`reset`."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self.now: dict[Role, SlotReading] = {}
        self._seen: set[Role] = set()

    def __call__(self, reading: SlotReading) -> None:
        with self._changed:
            self.now[reading.slot] = reading
            if reading.state is SlotState.PRESENT:
                self._seen.add(reading.slot)
            self._changed.notify_all()

    def reset(self) -> None:
        with self._changed:
            self._seen = {r for r, got in self.now.items() if got.state is SlotState.PRESENT}

    def read_by(self) -> frozenset[Role]:
        with self._changed:
            return frozenset(self._seen)

    def wait_for(self, done: Callable[[], bool], timeout: float) -> bool:
        """Wait until ``done()``: woken by each reading, and every 50 ms for what is no
        reading (the board's GAIN confirmation)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not done():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(min(left, 0.05))
            return True

    def faults(self) -> list[str]:
        with self._changed:
            return [f"{r.value}: {got.detail}" for r, got in self.now.items()
                    if got.state is SlotState.FAULT]


def run_range_check(
    config: Config,
    *,
    sim: bool = False,
    gain_db: int | None = None,
    model: ReadRangeModel | None = None,
    input_fn: Callable[[str], str] | None = None,
    print_fn: Callable[[str], object] = print,
    hold_seconds: float = HOLD_SECONDS,
    answer_seconds: float = ANSWER_SECONDS,
    requests: StopRequests | None = None,
) -> int:
    """The check on the configured Pico (or the simulated one); returns the exit status.

    :param input_fn: answers a prompt (default: a line typed at the terminal, read so
        that a stop request ends the wait).
    :param hold_seconds: how long a hand-held sticker is read at each height.
    :param answer_seconds: how long to wait for the board's GAIN confirmation.
    :param gain_db: try this gain instead of ``reader.rx_gain_db`` (not saved).
    :param model: the simulator's read range (tests pass slots close together).
    :param requests: a stop request (Ctrl-C, SIGTERM) ends the check at the next prompt
        or pause: the board is let go and the status is 1 (the check did not finish).
    :raises CliError: not the mcu reader kind, a gain the RC522 has not, or a board
        that never answers (so the command exits non-zero).
    """
    if config.reader.kind != "mcu":
        raise CliError("the range check is for the RC522 flagship: reader.kind = \"mcu\", "
                       f"not {config.reader.kind!r}")
    gain = gain_db if gain_db is not None else config.reader.rx_gain_db
    stopping = threading.Event()
    if requests is not None:
        requests.watch(stopping.set)
    reader, pico = _open_board(config, sim, gain, model)
    watch = SlotWatch()
    reader.start(watch)
    ask = input_fn if input_fn is not None else terminal_input(stopping)
    session = _RangeSession(reader, watch, gain, pico, ask, print_fn, hold_seconds,
                            answer_seconds, stopping)
    try:
        return session.run()
    except CheckStoppedError:
        print_fn("range check stopped before its end: nothing was changed; run it again")
        return 1
    finally:
        reader.close()
        if pico is not None:
            pico.unplug()


def terminal_input(stopping: threading.Event, stream: TextIO | None = None,
                   out: TextIO | None = None) -> Callable[[str], str]:
    """A prompt answered by a line typed at the terminal (``stream``, standard input),
    whose wait ends within :data:`arbiter.app.stopping.INPUT_POLL` s of ``stopping``.

    The returned function raises :class:`CheckStoppedError` on a stop or the end of input.
    """
    lines = lines_until(stream if stream is not None else sys.stdin, stopping)

    def ask(prompt: str) -> str:
        target = out if out is not None else sys.stdout
        target.write(prompt)
        target.flush()
        line = next(lines, None)
        if line is None or stopping.is_set():
            raise CheckStoppedError("stopped at a prompt")
        return line

    return ask


def _open_board(config: Config, sim: bool, gain: int,
                model: ReadRangeModel | None) -> tuple[McuReader, FakePico | None]:
    """The configured Pico's reader, or the simulated Pico and a reader on it."""
    pico: FakePico | None = None
    try:
        if sim:
            import serial

            pico = FakePico(model=model)
            path = pico.path
            reader = McuReader(serial_factory=lambda: serial.Serial(path, 115200, timeout=0.05),
                               rx_gain_db=gain)
        else:
            reader = McuReader(config.reader.mcu_port, rx_gain_db=gain)
    except ArbiterError as exc:
        if pico is not None:
            pico.unplug()
        raise CliError(str(exc)) from None
    return reader, pico


class _RangeSession:
    """One run of the check on an open board: the gain confirmed, the slots empty, the
    sticker at each height over each slot, the verdict."""

    def __init__(self, reader: McuReader, watch: SlotWatch, gain: int, pico: FakePico | None,
                 ask: Callable[[str], str], print_fn: Callable[[str], object], hold: float,
                 answer: float, stopping: threading.Event) -> None:
        self.reader, self.watch, self.gain, self.pico = reader, watch, gain, pico
        self._ask, self.say, self.hold, self.answer = ask, print_fn, hold, answer
        self.stopping = stopping

    def run(self) -> int:
        """The whole check; the exit status."""
        if not self.gain_confirmed():
            self.say("the Pico did not confirm the gain: its main.py predates the GAIN "
                     "setting (copy firmware/pico/main.py to it again)")
            self.say("FAIL")
            return 1
        self.say("Heights are the sticker's height above the slot's floor (stand a ruler in it).")
        busy = self.busy_when_empty()
        if busy:
            self.say(f"the {' and '.join(busy)} slot reads a tag with both slots empty: take "
                     "every piece and sticker away from the board and run the check again")
            self.say("FAIL")
            return 1
        report = judge(run_steps(self.sample), self.gain)
        self.raise_faults("failed during the check")
        for line in report.lines():
            self.say(line)
        return 0 if report.passed else 1

    def raise_faults(self, when: str) -> None:
        if self.watch.faults():
            raise CliError(f"the slot microcontroller {when}: {'; '.join(self.watch.faults())}")

    def gain_confirmed(self) -> bool:
        """Wait for the board's GAIN answer (or a fault, raised); say the gain under test."""
        self.watch.wait_for(
            lambda: self.reader.rx_gain_confirmed == self.gain or bool(self.watch.faults()),
            self.answer)
        confirmed = self.reader.rx_gain_confirmed == self.gain
        self.raise_faults("fails")
        self.say(f"range check: RC522 receiver gain {self.gain} dB"
                 + (" (simulated board)" if self.pico is not None else ""))
        return confirmed

    def prompt(self, text: str) -> None:
        """Ask the builder to do ``text`` and wait for Enter (simulated: say it)."""
        if self.pico is not None:
            self.say(f"{text}: (simulated)")
        else:
            self._ask(f"{text}, then Enter: ")
        self.pause(0)

    def pause(self, seconds: float) -> None:
        """Wait ``seconds``; a stop request ends the check."""
        if self.stopping.wait(seconds):
            raise CheckStoppedError("stopped")

    def busy_when_empty(self) -> list[str]:
        """The slots that read a tag once the builder has emptied both."""
        self.prompt("Empty both slots")
        if self.pico is not None:
            self.pico.stickers.clear()
            self.pico.place("A", None)
        else:
            self.pause(self.hold)  # the board reports a tag gone 300 ms after it left
        return [r.name for r, got in self.watch.now.items() if got.state is SlotState.PRESENT]

    def sample(self, over: Role, height: int) -> frozenset[Role]:
        """The slots that read the sticker held ``height`` mm over the ``over`` slot."""
        where = f"hold the sticker {height} mm above the {over.name} slot's floor"
        if self.pico is not None:
            self.place_simulated(over, height)
        else:
            self._ask(f"  {where}, then Enter: ")
            # A hand-held sticker, in real time: what still shows from where it was a
            # moment ago is gone after the firmware's 300 ms; then a flicker counts.
            self.pause(self.hold / 2)
            self.watch.reset()
            self.pause(self.hold / 2)
        read = self.watch.read_by()
        seen = ", ".join(f"{r.name} {'reads' if r in read else '-'}" for r in Role)
        self.say(f"  {where} (simulated): {seen}" if self.pico is not None else f"    {seen}")
        return read

    def place_simulated(self, over: Role, height: int) -> None:
        """The simulated hand puts the sticker there; wait until the reader has the lines."""
        assert self.pico is not None
        pico, watch = self.pico, self.watch
        pico.stickers.clear()
        pico.place("A" if over is Role.ATTACKER else "D", SIM_STICKER, float(height))
        expected = {Role.ATTACKER: pico.state["A"], Role.DEFENDER: pico.state["D"]}
        if not watch.wait_for(lambda: all(watch.now[r].token == t for r, t in expected.items()),
                              self.answer):
            raise CliError("the simulated board's lines never reached the reader")
        watch.reset()
        self.pause(0)
