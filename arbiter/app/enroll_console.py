"""``gg-arbiter enroll``: a guided enrollment in the terminal, straight from a slot reader."""

from __future__ import annotations

import queue
import sys
import threading
from collections.abc import Callable

from arbiter.app.stopping import StopRequests, lines_until
from arbiter.device.enrollment import EnrollmentSession
from arbiter.drivers.readers.base import SlotReader, SlotReading, SlotState
from arbiter.threads import BackgroundThread, declare

INPUT = declare("enroll input", __name__,
                "reads the typed commands of the terminal's enrollment walk (s, q, Enter)")

_Event = tuple[str, object]


def run_enrollment_console(
    session: EnrollmentSession,
    reader: SlotReader,
    input_fn: Callable[[], str] | None = None,
    print_fn: Callable[[str], object] = print,
    requests: StopRequests | None = None,
) -> tuple[int, int]:
    """Drive ``session`` from ``reader`` in a terminal; returns the final progress.

    Starts the reader and closes it at the end. For each piece: prints the
    prompt, waits for a tag in the session's slot, offers it, prints the
    result, then waits for the slot to be empty before the next prompt.
    Typed commands, read from standard input (or by ``input_fn``, which may
    still be waiting for a line after this returns) on a thread: ``s`` skips
    the piece, ``q`` quits, Enter repeats the prompt. Returns when done, on ``q``
    or on a stop request (``requests``).
    """
    events: queue.Queue[_Event] = queue.Queue()

    def on_reading(reading: SlotReading) -> None:
        if reading.slot is session.slot:
            events.put(("reading", reading))

    def read_commands(stopping: threading.Event) -> None:
        if input_fn is None:  # standard input, read so that a stop ends the read
            for line in lines_until(sys.stdin, stopping):
                events.put(("command", line.strip().lower()))
            return
        while not stopping.is_set():
            try:
                line = input_fn()
            except (EOFError, OSError):
                return
            events.put(("command", line.strip().lower()))

    reading = BackgroundThread(read_commands, INPUT)
    reading.start()
    if requests is not None:  # a stop signal quits as q does
        requests.watch(lambda: events.put(("command", "q")))
    print_fn("Enrollment: s + Enter skips a piece, q + Enter quits.")
    reader.start(on_reading)
    try:
        need_empty = False
        prompted = False
        while not session.done:
            if not need_empty and not prompted:
                enrolled, total = session.progress
                print_fn(f"[{enrolled}/{total}] {session.prompt()}")
                prompted = True
            kind, value = events.get()
            if kind == "command":
                if value in ("q", "quit"):
                    break
                if value in ("s", "skip"):
                    print_fn(f"Skipped {session.skip()}")
                prompted = False
                continue
            assert isinstance(value, SlotReading)
            if value.state is SlotState.FAULT:
                print_fn(f"Reader fault: {value.detail or 'no detail'}")
            elif value.state is SlotState.EMPTY:
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
        enrolled, total = session.progress
        print_fn(f"Enrollment finished: {enrolled} of {total} pieces have a tag")
        return session.progress
    finally:
        reader.close()
        if input_fn is None:
            reading.stop()
        else:  # a caller's input_fn may block in a read nothing can wake: only ask
            reading.stopping.set()
