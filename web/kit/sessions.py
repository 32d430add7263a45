"""Admin sessions held on the server, and the CSRF token each session's forms carry.

Each login is an entry in a :class:`SessionRegistry` (logout removes it; idle or too
old it lapses); the signed cookie only names the entry, so a copied cookie dies with
it. :mod:`web.kit.pin_access` also binds the cookie to the PIN record
(:func:`web.kit.auth.pin_fingerprint`), so a PIN change ends every session.
"""

from __future__ import annotations

import hmac
import secrets
import threading
import time
from collections.abc import Callable, MutableMapping
from typing import Any


class SessionRegistry:
    """The admin sessions alive on this server, each ending at logout, after
    ``idle`` seconds without a request, or ``lifetime`` seconds after login.

    The cookie only names an entry here, so a copied cookie dies with its
    entry; a restart ends every session. At most ``limit`` are kept (the
    least recently used goes first). ``clock`` is monotonic (tests pass a fake).
    """

    def __init__(
        self,
        idle: float = 20 * 60.0,
        lifetime: float = 12 * 3600.0,
        limit: int = 64,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if idle <= 0 or lifetime <= 0 or limit < 1:
            raise ValueError("session idle time, lifetime and limit must be positive")
        self.idle = idle
        self.lifetime = lifetime
        self.limit = limit
        self._clock = clock
        self._sessions: dict[str, tuple[float, float]] = {}  # id -> (opened, last seen)
        self._lock = threading.Lock()

    def open(self) -> str:
        """Start a session; returns its id (for the signed cookie)."""
        sid = secrets.token_urlsafe(32)
        with self._lock:
            now = self._clock()
            self._prune(now)
            while len(self._sessions) >= self.limit:
                oldest = min(self._sessions, key=lambda key: self._sessions[key][1])
                del self._sessions[oldest]
            self._sessions[sid] = (now, now)
        return sid

    def touch(self, sid: object, *, renew: bool = True) -> bool:
        """True (and, with ``renew``, the idle time restarts) while ``sid`` is a live
        session. A page's own background fetches pass ``renew=False``: a page left
        open is not someone using it."""
        if not isinstance(sid, str):
            return False
        with self._lock:
            now = self._clock()
            entry = self._sessions.get(sid)
            if entry is None:
                return False
            opened, seen = entry
            if now - seen >= self.idle or now - opened >= self.lifetime:
                del self._sessions[sid]
                return False
            if renew:
                self._sessions[sid] = (opened, now)
            return True

    def close(self, sid: object) -> None:
        """End one session (logout)."""
        if isinstance(sid, str):
            with self._lock:
                self._sessions.pop(sid, None)

    def __len__(self) -> int:
        with self._lock:
            self._prune(self._clock())
            return len(self._sessions)

    def _prune(self, now: float) -> None:
        for sid, (opened, seen) in list(self._sessions.items()):
            if now - seen >= self.idle or now - opened >= self.lifetime:
                del self._sessions[sid]


CSRF_KEY = "csrf"


def csrf_token(session: MutableMapping[str, Any]) -> str:
    """The session's CSRF token, made on first use."""
    token = session.get(CSRF_KEY)
    if not isinstance(token, str):
        token = secrets.token_urlsafe(32)
        session[CSRF_KEY] = token
    return token


def csrf_ok(session: MutableMapping[str, Any], sent: str | None) -> bool:
    """True when ``sent`` is this session's CSRF token."""
    token = session.get(CSRF_KEY)
    if not isinstance(token, str) or not sent:
        return False
    return hmac.compare_digest(token.encode(), sent.encode())
