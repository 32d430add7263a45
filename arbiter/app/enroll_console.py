"""``gg-arbiter enroll``: a guided enrollment in the terminal, straight from a slot reader."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

from arbiter.device.enrollment import EnrollmentSession
from arbiter.hardware.readers.base import SlotReader, SlotReading, SlotState

_Event = tuple[str, object]


def run_enrollment_console(
    session: EnrollmentSession,
    reader: SlotReader,
    input_fn: Callable[[], str] = input,
    print_fn: Callable[[str], object] = print,
) -> tuple[int, int]:
    """Drive ``session`` from ``reader`` in a terminal; returns the final progress.

    Starts the reader and closes it at the end. For each piece: prints the
    prompt, waits for a tag in the session's slot, offers it, prints the
    result, then waits for the slot to be empty before the next prompt.
    Typed commands, read by ``input_fn`` on a daemon thread (which may still
    be waiting for a line after this returns): ``s`` skips the piece, ``q``
    quits, Enter repeats the prompt. Returns when done or on ``q``.
    """
    events: queue.Queue[_Event] = queue.Queue()

    def on_reading(reading: SlotReading) -> None:
        if reading.slot is session.slot:
            events.put(("reading", reading))

    def read_commands() -> None:
        while True:
            try:
                line = input_fn()
            except (EOFError, OSError):
                return
            events.put(("command", line.strip().lower()))

    threading.Thread(target=read_commands, name="enroll input", daemon=True).start()
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
