"""A slot reader's report callback for tests: keeps every reading, lets a test wait for one."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from arbiter.drivers.readers.base import SlotReading
from tests.support.waiting import WAIT


class ReadingRecorder:
    """Pass it to ``reader.start``; it keeps each reading and the ``clock`` at its arrival."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.readings: list[SlotReading] = []
        self.times: list[float] = []  # the clock at each report
        self._clock = clock
        self._cond = threading.Condition()

    def __call__(self, reading: SlotReading) -> None:
        with self._cond:
            self.readings.append(reading)
            self.times.append(self._clock())
            self._cond.notify_all()

    def snapshot(self) -> list[SlotReading]:
        with self._cond:
            return list(self.readings)

    def wait_readings(
        self, pred: Callable[[list[SlotReading]], bool], timeout: float = WAIT
    ) -> bool:
        """True once ``pred`` holds for the readings so far; False after ``timeout``."""
        with self._cond:
            return self._cond.wait_for(lambda: pred(self.readings), timeout)

    def first_index(
        self, match: Callable[[SlotReading], bool], *, after: int, timeout: float, what: str
    ) -> int:
        """Index of the first reading at or after ``after`` that ``match`` accepts."""

        def find() -> int | None:
            for i in range(after, len(self.readings)):
                if match(self.readings[i]):
                    return i
            return None

        with self._cond:
            assert self._cond.wait_for(lambda: find() is not None, timeout), (
                f"no {what} after #{after}; got {self.readings}"
            )
            found = find()
            assert found is not None
            return found
