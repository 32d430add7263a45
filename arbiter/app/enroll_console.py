"""``gg-arbiter enroll``: a guided enrollment in the terminal, straight from a slot reader.

It names a piece; the admin puts it in the slot and takes it out when told. To go
in their own order (no sorting of 42 pieces), the admin types the name of the
piece in their hand (``B:SPY``, ``W:PVT``) and puts that one in. With the simulator
(``gg-arbiter enroll --sim``) Enter puts the piece asked for, with its simulated
sticker, in the slot and takes it out again, so the walk can be rehearsed.
"""

from __future__ import annotations

import itertools
import queue
import sys
import threading
from collections.abc import Callable

from arbiter.app.config import Config
from arbiter.app.errors import CliError, EnrollReaderError
from arbiter.app.stopping import StopRequests, lines_until
from arbiter.device.enrollment import EnrollmentSession
from arbiter.drivers.readers.base import SlotReader, SlotReading, SlotState
from arbiter.drivers.readers.sim import SimSlots
from arbiter.errors import ArbiterError
from arbiter.threads import BackgroundThread, declare

INPUT = declare("enroll input", __name__,
                "reads the typed commands of the terminal's enrollment walk "
                "(s, q, a piece's name, Enter)")

_Event = tuple[int, int, str, object]  # (priority, order, kind, value)


def run_enrollment_console(
    session: EnrollmentSession,
    reader: SlotReader,
    input_fn: Callable[[], str] | None = None,
    print_fn: Callable[[str], object] = print,
    *,
    sim: SimSlots | None = None,
    requests: StopRequests | None = None,
) -> tuple[int, int]:
    """Drive ``session`` from ``reader`` in a terminal; returns the final progress.

    Starts the reader and closes it at the end. For each piece: prints the
    prompt, waits for a tag in the session's slot, offers it, prints the
    result, then waits for the slot to be empty before the next prompt.
    Typed commands, read from standard input (or by ``input_fn``, which may
    still be waiting for a line after this returns) on a thread: ``s`` skips the
    piece, ``q`` (or the end of input) quits, a piece's name (``B:SPY``) makes it
    the next one, Enter repeats the prompt (with ``sim``: puts the piece asked for
    in the slot). Returns when done, on ``q`` or on a stop request (``requests``).

    :raises EnrollReaderError: the reader reports a fault (unplugged, not answering).
    """
    walk = _Walk(session, print_fn, sim)
    reading = BackgroundThread(lambda stopping: walk.read_commands(input_fn, stopping), INPUT)
    reading.start()
    if requests is not None:  # a stop signal quits as q does
        requests.watch(lambda: walk.command("q"))
    print_fn("Enrollment: s + Enter skips a piece, q + Enter quits; type a piece's name "
             "(B:SPY) to enroll that one next"
             + ("; Enter seats the piece asked for (simulator)." if sim else "."))
    reader.start(walk.on_reading)
    try:
        walk.run()
        enrolled, total = session.progress
        print_fn(f"Enrollment finished: {enrolled} of {total} pieces have a tag")
        return session.progress
    finally:
        reader.close()
        if input_fn is None:
            reading.stop()
        else:  # a caller's input_fn may block in a read nothing can wake: only ask
            reading.stopping.set()


class _Walk:
    """The terminal walk's state: the events (readings of the session's slot before
    typed lines), whether the slot must be emptied first, whether the prompt is shown."""

    def __init__(self, session: EnrollmentSession, say: Callable[[str], object],
                 sim: SimSlots | None) -> None:
        self.session, self.say, self.sim = session, say, sim
        # Readings before typed lines: a piece seated by a line (the simulator) counts
        # before the lines typed after it, however fast they came (a script).
        self.events: queue.PriorityQueue[_Event] = queue.PriorityQueue()
        self._order = itertools.count()
        self.need_empty = False
        self.prompted = False

    def on_reading(self, reading: SlotReading) -> None:
        if reading.slot is self.session.slot:
            self.events.put((0, next(self._order), "reading", reading))

    def command(self, line: str) -> None:
        self.events.put((1, next(self._order), "command", line.strip()))

    def read_commands(self, input_fn: Callable[[], str] | None,
                      stopping: threading.Event) -> None:
        """Queue each typed line (standard input, read so that a stop ends the read, or
        ``input_fn``); the end of input quits."""
        if input_fn is None:
            for line in lines_until(sys.stdin, stopping):
                self.command(line)
        else:
            while not stopping.is_set():
                try:
                    self.command(input_fn())
                except (EOFError, OSError):
                    break
        if not stopping.is_set():
            self.command("q")  # the end of input quits (a script's last line is read)

    def run(self) -> None:
        """Prompt, and take each event in turn, until every piece is done or q."""
        session = self.session
        while not session.done:
            if not self.need_empty and not self.prompted:
                enrolled, total = session.progress
                self.say(f"[{enrolled}/{total}] {session.prompt()}")
                self.prompted = True
            _, _, kind, value = self.events.get()
            if kind == "command":
                assert isinstance(value, str)
                if not self.typed(value):
                    return
            else:
                assert isinstance(value, SlotReading)
                self.reading(value)

    def typed(self, value: str) -> bool:
        """Carry out one typed command; False on q."""
        session = self.session
        if value.lower() in ("q", "quit"):
            return False
        if value.lower() in ("s", "skip"):
            self.say(f"Skipped {session.skip()}")
        elif ":" in value:
            try:
                session.choose(value)
            except ArbiterError as exc:
                self.say(f"refused: {exc}")
        elif not value and self.sim is not None and not self.need_empty:
            self.sim.seat(session.slot, str(session.current))
            return True  # its reading comes next: the prompt stays as it is
        self.prompted = False
        return True

    def reading(self, value: SlotReading) -> None:
        """A change in the session's slot: a fault stops the walk, a tag is offered, an
        empty slot after a tag brings the next prompt."""
        if value.state is SlotState.FAULT:
            raise EnrollReaderError(
                f"reader fault: {value.detail or 'no detail'}; enrollment stopped "
                "(fix the reader, then run gg-arbiter enroll again: it resumes)")
        if value.state is SlotState.EMPTY:
            if self.need_empty:
                self.need_empty = False
                self.prompted = False
        elif value.state is SlotState.PRESENT and not self.need_empty and value.token:
            result = self.session.offer(value.token)
            self.say(result.message)
            if not self.session.done:
                self.say("Take the piece out of the slot")
            self.need_empty = True
            self.prompted = False
            if self.sim is not None:
                self.sim.clear(self.session.slot)  # the simulated hand takes it out again


def run_enrollment_walk(config: Config, piece: str | None, *, sim: bool = False,
                        requests: StopRequests | None = None) -> int:
    """``gg-arbiter enroll`` with no arbiter running: the reader opened here (or the
    simulator's slots); returns the exit status.

    :raises CliError: for every failure (not an RFID reader, a bad piece, a reader
        that cannot be opened or fails during the walk), so the command exits non-zero.
    """
    from arbiter.app.assembly import build_readers
    from arbiter.rules.army import PhysicalPiece

    try:
        only = PhysicalPiece.parse(piece) if piece else None
        readers, _identifier, registry, slots = build_readers(config, None, sim=sim)
        if registry is None:
            raise CliError(f"enrollment is for RFID readers; reader.kind is "
                           f"{config.reader.kind!r} (set it to rdm6300 or mcu)")
        session = EnrollmentSession(registry, only=only)
    except (ArbiterError, ValueError) as exc:
        raise CliError(str(exc)) from None
    reader = next(r for r in readers if session.slot in r.slots)
    for other in readers:
        if other is not reader:
            other.close()
    try:
        done, total = run_enrollment_console(session, reader, sim=slots, requests=requests)
    except EnrollReaderError as exc:
        raise CliError(str(exc)) from None
    print(f"enrolled {done} of {total} pieces; tags in {registry.path}"
          + (" (simulated stickers)" if sim else ""))
    return 0
