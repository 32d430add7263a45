"""The device's worker: one thread that handles events in the order they came.

Readers put their readings on its queue; other threads run commands on it
and wait for the result. So a challenge is decided exactly once and in
order, and nothing else (a page, a button) ever runs beside it.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import TypeVar

from arbiter.device.errors import DeviceError
from arbiter.hardware.readers.base import SlotReading

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True)
class _Command:
    """A command wrapped to run on the worker and hand its outcome to its caller."""

    run: Callable[[], None]


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
    """

    def __init__(
        self,
        on_reading: Callable[[SlotReading], None],
        *,
        after_command: Callable[[], None],
        on_error: Callable[[], None],
    ) -> None:
        self._on_reading = on_reading
        self._after_command = after_command
        self._on_error = on_error
        self._events: queue.Queue[_Event] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="arbiter", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float) -> None:
        """End the thread once the event it handles now is done (wait up to ``timeout``)."""
        if self._thread.is_alive():
            self._events.put(_Stop())
            self._thread.join(timeout=timeout)

    def is_alive(self) -> bool:
        return self._thread.is_alive()

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

        self._events.put(_Command(run))
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
            event = self._events.get()
            if isinstance(event, _Stop):
                return
            try:
                self._handle(event)
            except Exception:  # the device must keep running whatever one event does
                log.exception("unexpected error handling an event")
                try:
                    self._on_error()
                except Exception:
                    log.exception("could not show the error")

    def _handle(self, event: SlotReading | _Command) -> None:
        if isinstance(event, SlotReading):
            self._on_reading(event)
        else:
            event.run()
