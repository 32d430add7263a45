"""The one rule for logging what comes from outside: refused messages, bad input to a page
or the API, refused PINs, ignored requests. No sender can fill the log (issue 27).

Per kind and sender (a key), the first :data:`FIRST` get a line each, then one in
:data:`EVERY`; and however many keys there are, a :class:`LogThrottle` writes at most
:data:`PER_MINUTE` lines a minute, the next line saying how many it held back.
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


class LogThrottle:
    """Counts refusals per key and says when one gets a log line. Thread-safe.

    :meth:`note` returns ``(count, held)`` when a line is due (the key's count so far,
    and how many lines the per-minute cap held back since the last line), else None.
    ``clock`` is monotonic seconds (tests pass a fake).
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._counts: dict[str, int] = {}
        self._minute = clock()
        self._lines = 0
        self._held = 0
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
        with self._lock:
            return self._line(due(count), count)

    def _line(self, wanted: bool, count: int) -> tuple[int, int] | None:
        if not wanted:
            return None
        now = self._clock()
        if now - self._minute >= 60.0:
            self._minute, self._lines = now, 0
        if self._lines >= PER_MINUTE:
            self._held += 1
            return None
        self._lines += 1
        held, self._held = self._held, 0
        return count, held
