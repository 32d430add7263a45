"""The one fake clock of the tests, for code that takes a ``clock`` (and maybe ``sleep``)."""

from __future__ import annotations

import threading
from datetime import UTC, datetime


class FakeClock:
    """A clock that moves only when told to (:meth:`advance`, or ``now`` set forward) or
    slept on. Called, it is a monotonic clock in seconds; :meth:`wall` reads the same
    instant as a UTC datetime, for code that timestamps (the hub's ledger).

    Safe to read from a reader's thread while the test advances it.
    """

    def __init__(self, start: float = 1000.0) -> None:
        self._now = start
        self._lock = threading.Lock()
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        with self._lock:
            return self._now

    @property
    def now(self) -> float:
        return self()

    @now.setter
    def now(self, value: float) -> None:
        with self._lock:
            if value < self._now:
                raise ValueError(f"a monotonic clock never goes back ({value} < {self._now})")
            self._now = value

    def advance(self, seconds: float) -> None:
        """Move the clock forward by ``seconds`` (never backward)."""
        with self._lock:
            self._now += max(seconds, 0.0)

    def sleep(self, seconds: float) -> None:
        """Record a sleep and return at once, the clock moved on by ``seconds``."""
        self.sleeps.append(seconds)
        self.advance(seconds)

    def wall(self) -> datetime:
        """The same instant as a UTC datetime (``start`` read as seconds since the epoch)."""
        return datetime.fromtimestamp(self(), UTC)
