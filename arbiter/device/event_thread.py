"""The device's worker: one thread that handles events in the order they came.

Readers put their readings on its queue; other threads run commands on it
and wait for the result. So a challenge is decided exactly once and in
order, and nothing else (a page, a button) ever runs beside it.

Heartbeat (what the systemd watchdog is fed on, issue 8): the thread being
alive proves nothing, since a thread stuck in a command or a journal write
is alive. So the loop proves progress instead:

* idle, it wakes at least every :data:`BEAT_EVERY` seconds (the queue's
  ``get`` has a timeout) and records a monotonic timestamp each turn;
* busy, each event carries a *budget*, the longest it may legitimately
  take: a command's is the time its caller waits for it (90 s, 180 s for
  the self-test), a reading's is the device's command timeout, which covers
  the battle phrase and a whole Taps (23 s). Within its budget a busy
  worker counts as healthy.

A budget rather than beats from inside the long event, because the tunes
and the journal live in lower layers that should not know about a watchdog,
and a tune that beats could hide a worker stuck around it. The price: a hung
event is noticed only once its budget has run out (then systemd's
``WatchdogSec`` later); the callers have given up by then anyway.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import TypeVar

from arbiter.device.errors import DeviceError
from arbiter.drivers.readers.base import SlotReading
from arbiter.threads import BackgroundThread, declare

DEVICE_WORKER = declare("arbiter", __name__,
                        "the device's one thread: readings and commands, in the order they came")

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Seconds an idle worker waits for an event before it beats anyway.
BEAT_EVERY = 2.0
#: An idle worker whose last beat is older than this (seconds) is stuck.
STALE_AFTER = 5 * BEAT_EVERY


@dataclass(frozen=True)
class _Command:
    """A command wrapped to run on the worker and hand its outcome to its caller."""

    run: Callable[[], None]
    #: Seconds it may hold the worker and still count as progress.
    budget: float


@dataclass(frozen=True)
class _Busy:
    """The event the worker handles now: since when, and for how long that is normal."""

    since: float
    budget: float


class _Stop:
    """Ends the worker."""


_Event = SlotReading | _Command | _Stop


class Worker:
    """Runs ``on_reading`` for each posted reading, and commands, on one thread.

    :param on_reading: handles one reading.
    :param after_command: runs after each command, before its caller wakes
        (so the caller's next look at the device sees the change).
    :param on_error: runs after an event raised an unexpected error (logged);
        the worker goes on with the next event.
    :param reading_budget: seconds handling one reading may take (a verdict
        with its tunes) before the worker counts as stuck.
    :param clock: monotonic seconds, for the heartbeat (tests pass a fake).
    :param beat_every: seconds an idle worker waits before beating anyway.
    :param on_idle: runs on the worker each time it has waited ``beat_every`` with
        nothing to do (what runs out with time: the NEW GAME button's question).
    """

    def __init__(
        self,
        on_reading: Callable[[SlotReading], None],
        *,
        after_command: Callable[[], None],
        on_error: Callable[[], None],
        reading_budget: float,
        clock: Callable[[], float] = time.monotonic,
        beat_every: float = BEAT_EVERY,
        on_idle: Callable[[], None] | None = None,
    ) -> None:
        self._on_reading = on_reading
        self._on_idle = on_idle
        self._after_command = after_command
        self._on_error = on_error
        self._reading_budget = reading_budget
        self._clock = clock
        self._beat_every = beat_every
        self._beat = clock()
        self._busy: _Busy | None = None  # replaced whole: read from other threads
        self._events: queue.Queue[_Event] = queue.Queue()
        self._thread = BackgroundThread(
            lambda _stopping: self._run(), DEVICE_WORKER, wake=lambda: self._events.put(_Stop())
        )

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float) -> None:
        """End the thread once the event it handles now is done (wait up to ``timeout``)."""
        if self._thread.is_alive():
            self._thread.stop(timeout)

    def is_alive(self) -> bool:
        return self._thread.is_alive()

    def is_healthy(self) -> bool:
        """True while the worker makes progress (see the module's docstring).

        Idle: it beat within :data:`STALE_AFTER` s. Busy: the event it handles
        is still within its budget.
        """
        if not self._thread.is_alive():
            return False
        now = self._clock()
        busy = self._busy
        if busy is not None:
            return now - busy.since <= busy.budget
        return now - self._beat <= STALE_AFTER

    def post(self, reading: SlotReading) -> None:
        """Queue a reading (any thread; a reader's callback)."""
        self._events.put(reading)

    def call(self, action: Callable[[], T], timeout: float) -> T:
        """Run ``action`` on the worker thread and return its result (or raise).

        :raises DeviceError: the worker stayed busy past ``timeout`` (the command
            is then withdrawn and never runs).
        """
        if threading.current_thread() is self._thread:
            return action()
        done: Future[T] = Future()

        def run() -> None:
            if not done.set_running_or_notify_cancel():
                return  # the caller gave up waiting: the command is withdrawn
            try:
                result = action()
            except Exception as exc:
                self._after_command()
                done.set_exception(exc)
            else:
                self._after_command()  # before the caller wakes: it sees the change
                done.set_result(result)

        self._events.put(_Command(run, budget=timeout))
        try:
            return done.result(timeout=timeout)
        except FutureTimeout:
            if done.cancel():
                raise DeviceError("the device is busy (a tune or self-test): try again") from None
            return done.result()  # it started just now: it will finish

    def take_pending_readings(self) -> list[SlotReading]:
        """The readings queued meanwhile (worker thread); other events keep their turn."""
        readings: list[SlotReading] = []
        others: list[_Event] = []
        while True:
            try:
                event = self._events.get_nowait()
            except queue.Empty:
                break
            if isinstance(event, SlotReading):
                readings.append(event)
            else:
                others.append(event)
        for event in others:
            self._events.put(event)
        return readings

    def _run(self) -> None:
        while True:
            self._beat = self._clock()
            try:
                event = self._events.get(timeout=self._beat_every)
            except queue.Empty:
                if self._on_idle is not None:
                    try:
                        self._on_idle()
                    except Exception:  # as for an event: the device keeps running
                        log.exception("unexpected error in the idle turn")
                continue  # idle: the next turn beats
            if isinstance(event, _Stop):
                return
            budget = event.budget if isinstance(event, _Command) else self._reading_budget
            self._busy = _Busy(self._clock(), budget)
            try:
                self._handle(event)
            except Exception:  # the device must keep running whatever one event does
                log.exception("unexpected error handling an event")
                try:
                    self._on_error()
                except Exception:
                    log.exception("could not show the error")
            finally:
                self._beat = self._clock()  # beat first: never idle with an old beat
                self._busy = None

    def _handle(self, event: SlotReading | _Command) -> None:
        if isinstance(event, SlotReading):
            self._on_reading(event)
        else:
            event.run()
