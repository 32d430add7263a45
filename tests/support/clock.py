"""A fake monotonic clock for code that takes a ``clock`` (and maybe ``sleep``) argument."""

from __future__ import annotations

import threading


class FakeClock:
    """A monotonic clock that moves only when told to (:meth:`advance`) or slept on.

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

    def advance(self, seconds: float) -> None:
        """Move the clock forward by ``seconds`` (never backward)."""
        with self._lock:
            self._now += max(seconds, 0.0)

    def sleep(self, seconds: float) -> None:
        """Record a sleep and return at once, the clock moved on by ``seconds``."""
        self.sleeps.append(seconds)
        self.advance(seconds)
