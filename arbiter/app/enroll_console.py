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
    # Readings before typed lines: a piece seated by a line (the simulator) counts
    # before the lines typed after it, however fast they came (a script).
    events: queue.PriorityQueue[_Event] = queue.PriorityQueue()
    order = itertools.count()

    def on_reading(reading: SlotReading) -> None:
        if reading.slot is session.slot:
            events.put((0, next(order), "reading", reading))

    def command(line: str) -> None:
        events.put((1, next(order), "command", line.strip()))

    def read_commands(stopping: threading.Event) -> None:
        if input_fn is None:  # standard input, read so that a stop ends the read
            for line in lines_until(sys.stdin, stopping):
                command(line)
        else:
            while not stopping.is_set():
                try:
                    command(input_fn())
                except (EOFError, OSError):
                    break
        if not stopping.is_set():
            command("q")  # the end of input quits (a script's last line is read)

    reading = BackgroundThread(read_commands, INPUT)
    reading.start()
    if requests is not None:  # a stop signal quits as q does
        requests.watch(lambda: command("q"))
    print_fn("Enrollment: s + Enter skips a piece, q + Enter quits; type a piece's name "
             "(B:SPY) to enroll that one next"
             + ("; Enter seats the piece asked for (simulator)." if sim else "."))
    reader.start(on_reading)
    try:
        need_empty = False
        prompted = False
        while not session.done:
            if not need_empty and not prompted:
                enrolled, total = session.progress
                print_fn(f"[{enrolled}/{total}] {session.prompt()}")
                prompted = True
            _, _, kind, value = events.get()
            if kind == "command":
                assert isinstance(value, str)
                if value.lower() in ("q", "quit"):
                    break
                if value.lower() in ("s", "skip"):
                    print_fn(f"Skipped {session.skip()}")
                elif ":" in value:
                    try:
                        session.choose(value)
                    except ArbiterError as exc:
                        print_fn(f"refused: {exc}")
                elif not value and sim is not None and not need_empty:
                    sim.seat(session.slot, str(session.current))
                    continue
                prompted = False
                continue
            assert isinstance(value, SlotReading)
            if value.state is SlotState.FAULT:
                raise EnrollReaderError(
                    f"reader fault: {value.detail or 'no detail'}; enrollment stopped "
                    "(fix the reader, then run gg-arbiter enroll again: it resumes)")
            if value.state is SlotState.EMPTY:
                if need_empty:
                    need_empty = False
                    prompted = False
            elif value.state is SlotState.PRESENT and not need_empty and value.token:
                result = session.offer(value.token)
                print_fn(result.message)
                if not session.done:
                    print_fn("Take the piece out of the slot")
                need_empty = True
                prompted = False
                if sim is not None:
                    sim.clear(session.slot)  # the simulated hand takes it out again
        enrolled, total = session.progress
        print_fn(f"Enrollment finished: {enrolled} of {total} pieces have a tag")
        return session.progress
    finally:
        reader.close()
        if input_fn is None:
            reading.stop()
        else:  # a caller's input_fn may block in a read nothing can wake: only ask
            reading.stopping.set()


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
