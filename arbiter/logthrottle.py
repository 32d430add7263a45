"""The one rule for logging what comes from outside: refused messages, bad input to a page
or the API, refused PINs, ignored requests. No sender can fill the log (issue 27).

Per kind and sender (a key), the first :data:`FIRST` get a line each, then one in
:data:`EVERY`; and however many keys and kinds there are, every :class:`LogThrottle` of
the process draws on one :class:`Budget` (:data:`SHARED`): at most :data:`PER_MINUTE`
lines a minute of bad input in all (wire refusals, bad statuses, refused records, PINs,
request bodies, unexpected errors, the broker's refusals), the next line saying how many
were held back. One sender cannot fill the log by varying what it sends.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

#: Each key's first refusals each get a line...
FIRST = 10
#: ... then one line in this many.
EVERY = 1000
#: Lines a throttle writes a minute at most, over all its keys.
PER_MINUTE = 60
#: Keys counted at most (the oldest is forgotten first): an attacker changing addresses
#: fills no memory.
KEYS = 4096


def due(count: int) -> bool:
    """Whether the ``count``-th refusal of a key gets a line (the per-key rule)."""
    return count <= FIRST or count % EVERY == 0


class Budget:
    """Lines a minute at most, over every throttle drawing on it. Thread-safe.
    ``clock`` is monotonic seconds (tests pass a fake)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._minute = clock()
        self._lines = 0
        self._held = 0
        self._lock = threading.Lock()

    def reset(self) -> None:
        """A new minute, nothing held back (a test's fresh start)."""
        with self._lock:
            self._minute, self._lines, self._held = self.clock(), 0, 0

    def take(self) -> int | None:
        """A line may be written: how many were held back since the last (then 0), or
        None when this minute's lines are spent (this one is held back and counted)."""
        with self._lock:
            now = self.clock()
            if now - self._minute >= 60.0:
                self._minute, self._lines = now, 0
            if self._lines >= PER_MINUTE:
                self._held += 1
                return None
            self._lines += 1
            held, self._held = self._held, 0
            return held


#: The one budget of the process's throttles (those given no clock of their own).
SHARED = Budget()


class LogThrottle:
    """Counts refusals per key and says when one gets a log line. Thread-safe.

    :meth:`note` returns ``(count, held)`` when a line is due (the key's count so far,
    and how many lines the per-minute cap held back since the last line), else None.
    The cap is :data:`SHARED`'s, over every throttle; a ``clock`` other than its own
    (monotonic seconds: a test's fake) gives this throttle a budget on that clock instead.
    """

    def __init__(self, clock: Callable[[], float] | None = None) -> None:
        shared = clock is None or clock is SHARED.clock
        self._budget = SHARED if shared else Budget(clock or time.monotonic)
        self._counts: dict[str, int] = {}
        self._lock = threading.Lock()

    def note(self, key: str) -> tuple[int, int] | None:
        with self._lock:
            count = self._counts.pop(key, 0) + 1
            self._counts[key] = count  # most recent last: the oldest goes first
            if len(self._counts) > KEYS:
                del self._counts[next(iter(self._counts))]
        return self._line(due(count), count)

    def note_total(self, count: int) -> tuple[int, int] | None:
        """As :meth:`note`, for a key whose count is kept elsewhere (the ledger's)."""
        return self._line(due(count), count)

    def _line(self, wanted: bool, count: int) -> tuple[int, int] | None:
        if not wanted:
            return None
        held = self._budget.take()
        return None if held is None else (count, held)
