"""Limits on PIN guessing: the attempt limiter (per client, and a bucket shared by all)
and the gate that caps the PIN checks under way at once."""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable

from web.kit import auth

#: Seconds a client that asked for a PIN check keeps its place in turn without asking
#: again (a person reads "try again in 20 s" and tries again well within it).
ASKING_FORGET = 120.0


class AttemptLimiter:
    """At most ``max_failures`` wrong PINs per client within ``window`` seconds, and
    across all clients a token bucket: ``global_burst`` guesses at once, then one per
    ``global_interval`` seconds (so many addresses cannot multiply the per-client budget:
    40 addresses once made 200 guesses in 33 s).

    The bucket's tokens go in turn, never to whoever asks first (issue 27: three
    addresses guessing once a second each took every token as it came, and the right
    PIN got 429 for 180 s). Each client that asks joins the ones waiting (for
    :data:`ASKING_FORGET` seconds after it last asked); while there are fewer tokens
    than clients waiting, a token goes to the client checked longest ago, a client never
    checked first, then the one that asked first. A guesser has been checked, so an
    organiser who has not is next: their right PIN passes with the next token, within
    ``global_interval`` seconds, however many wrong PINs are sent, and the guesses a
    minute stay what the bucket allows.

    A check takes an attempt from the client's budget and a token from the shared
    bucket *before* it runs (:meth:`reserve`) and settles it after (:meth:`settle`):
    checks still running count against both, so concurrent requests cannot all slip
    past the limit while the slow hash runs. A right PIN gives both back, so an
    organiser's own API calls with the PIN spend nothing; while guessing has emptied
    the bucket, PIN checks wait for it too, but logged-in sessions need none.
    ``clock`` is the monotonic time both are measured on (tests pass a fake).
    """

    def __init__(
        self,
        max_failures: int = 5,
        window: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
        *,
        global_burst: int = 10,
        global_interval: float = 30.0,
    ) -> None:
        if max_failures < 1 or window <= 0 or global_burst < 1 or global_interval <= 0:
            raise ValueError("PIN attempt limits must be positive")
        self.max_failures = max_failures
        self._clock = clock
        self.window = window
        self.global_burst = global_burst
        self.global_interval = global_interval
        self._failures: dict[str, deque[float]] = {}
        self._pending: dict[str, int] = {}
        self._tokens = float(global_burst)
        self._filled_at = clock()
        # Clients waiting for a token: (first asked, last asked); when each was checked.
        self._asking: dict[str, tuple[float, float]] = {}
        self._checked: dict[str, float] = {}
        self._lock = threading.Lock()

    def _refill(self, now: float) -> None:
        elapsed = max(0.0, now - self._filled_at)
        self._tokens = min(float(self.global_burst), self._tokens + elapsed / self.global_interval)
        self._filled_at = now

    def _global_wait(self, now: float, client: str | None = None) -> float:
        """Seconds until the shared bucket holds a token for ``client`` (0 if it does now):
        one more than the clients ahead of it in turn (see the class)."""
        self._refill(now)
        needed = 1.0 + (0 if client is None else self._ahead(client, now))
        missing = needed - self._tokens
        # A token that is whole but for float rounding is whole: the time told holds.
        return 0.0 if missing <= 1e-9 else missing * self.global_interval

    def _ahead(self, client: str, now: float) -> int:
        """How many clients waiting come before ``client`` in turn."""
        for key in [k for k, (_first, last) in self._asking.items()
                    if now - last >= ASKING_FORGET]:
            del self._asking[key]
        never = float("-inf")
        # Checked longest ago first, then asked first (then joined first: a fake clock).
        turns = [(self._checked.get(other, never), since, place)
                 for place, (other, (since, _last)) in enumerate(self._asking.items())]
        mine = next((turn for turn, other in zip(turns, self._asking, strict=True)
                     if other == client),
                    (self._checked.get(client, never), now, len(turns)))
        return sum(1 for turn in turns if turn < mine)

    def _recent(self, client: str, now: float) -> deque[float]:
        times = self._failures.get(client)
        if times is None:
            return deque()
        while times and times[0] <= now - self.window:
            times.popleft()
        if not times:
            del self._failures[client]
        return times

    def _used(self, client: str, now: float) -> int:
        return len(self._recent(client, now)) + self._pending.get(client, 0)

    def blocked(self, client: str) -> bool:
        """True while ``client`` has used up its attempts (checks in progress included),
        or the shared bucket has no token for it yet."""
        with self._lock:
            now = self._clock()
            return (self._used(client, now) >= self.max_failures
                    or self._global_wait(now, client) > 0)

    def reserve(self, client: str) -> bool:
        """Take one attempt from ``client``'s budget and a token when its turn has come;
        False (nothing taken) when its budget is used up or its turn has not come (it
        waits in turn: ask again after :meth:`retry_after`).

        Every True must be followed by one :meth:`settle`.
        """
        with self._lock:
            now = self._clock()
            self._prune(now)
            if self._used(client, now) >= self.max_failures:
                return False
            first = self._asking.get(client, (now, now))[0]
            self._asking[client] = (first, now)
            if self._global_wait(now, client) > 0:
                return False
            del self._asking[client]
            self._checked.pop(client, None)
            self._checked[client] = now  # the latest last: the oldest are forgotten first
            self._tokens -= 1.0
            self._pending[client] = self._pending.get(client, 0) + 1
            return True

    def settle(self, client: str, outcome: bool | None) -> None:
        """End a reserved attempt: True a right PIN (forgets the client's failures),
        False a wrong one (counted), None not checked at all (given back). Only a
        wrong PIN keeps the shared token it took."""
        with self._lock:
            now = self._clock()
            left = self._pending.get(client, 0) - 1
            if left > 0:
                self._pending[client] = left
            else:
                self._pending.pop(client, None)
            if outcome is not False:
                self._refill(now)
                self._tokens = min(float(self.global_burst), self._tokens + 1.0)
            if outcome is True:
                self._failures.pop(client, None)
            elif outcome is False:
                self._record(client, now)

    def retry_after(self, client: str) -> int:
        """Seconds until ``client`` may try again (0 if it may now).

        Checks still running are assumed to fail, so the answer is never too early.
        """
        with self._lock:
            now = self._clock()
            wait = self._global_wait(now, client)
            times = list(self._recent(client, now))
            times += [now] * self._pending.get(client, 0)
            if len(times) >= self.max_failures:
                frees_at = times[len(times) - self.max_failures] + self.window
                wait = max(wait, frees_at - now)
            return 0 if wait <= 0 else max(1, int(wait + 0.999))

    def fail(self, client: str) -> None:
        """Count one wrong PIN (outside :meth:`reserve`), against the shared bucket too."""
        with self._lock:
            now = self._clock()
            self._prune(now)
            self._refill(now)
            self._tokens = max(0.0, self._tokens - 1.0)
            self._record(client, now)

    def reset(self, client: str) -> None:
        """Forget ``client``'s failures (after a right PIN)."""
        with self._lock:
            self._failures.pop(client, None)

    def _prune(self, now: float) -> None:
        if len(self._failures) > 10_000:  # bound memory against address churn
            for key in list(self._failures):
                self._recent(key, now)
        while len(self._checked) > 10_000:  # the oldest checked: first in turn anyway
            del self._checked[next(iter(self._checked))]
        if len(self._asking) > 10_000:
            self._ahead("", now)  # forgets those that stopped asking

    def _record(self, client: str, now: float) -> None:
        self._recent(client, now)
        self._failures.setdefault(client, deque()).append(now)


class PinGate:
    """At most ``limit`` PIN checks under way at once: one hashing (on the one
    PIN-hashing thread, 16 MB and a core for a moment), the others waiting for it.

    Callers over the cap wait up to ``wait`` seconds for a turn.
    """

    def __init__(self, limit: int = 2, wait: float = 10.0) -> None:
        if limit < 1:
            raise ValueError("the PIN check limit must be at least 1")
        self.limit = limit
        self.wait = wait
        self._slots = threading.BoundedSemaphore(limit)

    def check(self, data_dir: str | os.PathLike[str], pin: str) -> bool | None:
        """:func:`web.kit.auth.check_pin` within the cap; None when no turn came within ``wait``."""
        if not self._slots.acquire(timeout=self.wait):
            return None
        try:
            return auth.check_pin(data_dir, pin)
        finally:
            self._slots.release()
