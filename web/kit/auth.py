"""The admin PIN, the session secret, CSRF tokens and the PIN attempt limiter.

``<data_dir>/admin.json`` holds the PIN as a salted scrypt hash and a random
session secret, both made on first run (never a fixed default). The file is
written atomically and readable by its owner only; the PIN is read from it
at each check, so ``gg-arbiter set-pin`` takes effect on a running server.

Admin sessions end server-side: each login is an entry in a
:class:`SessionRegistry` (logout removes it; idle or too old it lapses), and
the cookie is bound to the PIN record and the ``session_epoch`` stored beside
it, which ``set-pin`` raises: a PIN change ends every session, even one made
by another process.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from arbiter.errors import PinFormatError as PinFormatError
from arbiter.pinrule import MIN_DIGITS, check_pin_format
from arbiter.storage.durable import write_durably
from web.kit.errors import AdminFileError

ADMIN_FILE = "admin.json"
_GENERATED_DIGITS = MIN_DIGITS
_SCRYPT = {"n": 2**14, "r": 8, "p": 1}


#: What the admin pages and API say while admin.json is damaged.
REPAIR_HINT = (
    "the admin file is damaged, so admin access is off; repair it with "
    "`gg-arbiter set-pin` (the running arbiter takes the new PIN at once)"
)


# scrypt takes 128 * r * n bytes (16 MB) from malloc, and glibc keeps a freed buffer in
# the arena of the thread that used it: hashed on the server's threads, every thread
# that once checked a PIN held 16 MB (a table grew from 56 to 473 MB after 40 admin
# requests). Every hash runs on this one thread instead, so one arena holds it, once.
_hasher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pin-hash")


def _scrypt(pin: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(pin.encode(), salt=salt, n=n, r=r, p=p, dklen=32)


def _hash(pin: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    """scrypt of ``pin``, computed on the one PIN-hashing thread (callers wait their turn)."""
    return _hasher.submit(_scrypt, pin, salt, n, r, p).result()


def _pin_record(pin: str) -> dict[str, Any]:
    salt = secrets.token_bytes(16)
    digest = _hash(pin, salt, **_SCRYPT)
    return {"alg": "scrypt", **_SCRYPT, "salt": salt.hex(), "hash": digest.hex()}


def _matches(record: dict[str, Any], pin: str) -> bool:
    try:
        salt = bytes.fromhex(record["salt"])
        expected = bytes.fromhex(record["hash"])
        digest = _hash(pin, salt, int(record["n"]), int(record["r"]), int(record["p"]))
    except (KeyError, TypeError, ValueError):
        return False
    return hmac.compare_digest(digest, expected)


def _path(data_dir: str | os.PathLike[str]) -> Path:
    return Path(data_dir) / ADMIN_FILE


def _read(data_dir: str | os.PathLike[str]) -> dict[str, Any] | None:
    path = _path(data_dir)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise AdminFileError(f"{path}: {exc}") from None
    if not isinstance(data, dict):
        raise AdminFileError(f"{path}: not a JSON object")
    return data


def _write(data_dir: str | os.PathLike[str], data: dict[str, Any]) -> None:
    path = _path(data_dir)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # The one durable writer (file and directory fsynced): a power cut right after
        # set-pin keeps the new PIN, never neither.
        write_durably(path, json.dumps(data, indent=2).encode("utf-8"))
    except OSError as exc:
        raise AdminFileError(f"cannot write {path}: {exc}") from None


_file_lock = threading.Lock()


def ensure_admin(
    data_dir: str | os.PathLike[str],
    configured_pin: str | None,
    setting: str = "web.admin_pin",
) -> str | None:
    """Make sure admin.json has a session secret and a PIN hash.

    A ``configured_pin`` (from the config file) replaces the stored one when
    they differ. With none configured and none stored, a PIN is generated.

    :returns: the newly generated PIN, to print once in the console, else None.
    :raises PinFormatError: ``configured_pin`` breaks the PIN rule (the error names
        ``setting``, where it came from).
    :raises AdminFileError: admin.json is unreadable (it is never overwritten blindly).
    """
    if configured_pin is not None:
        check_pin_format(configured_pin, setting)
    with _file_lock:
        data = _read(data_dir) or {}
        changed = False
        generated: str | None = None
        if not isinstance(data.get("secret"), str) or len(data["secret"]) < 32:
            data["secret"] = secrets.token_hex(32)
            changed = True
        record = data.get("pin")
        has_pin = isinstance(record, dict) and "hash" in record
        if configured_pin is not None:
            if not (isinstance(record, dict) and has_pin and _matches(record, configured_pin)):
                data["pin"] = _pin_record(configured_pin)
                changed = True
        elif not has_pin:
            generated = "".join(secrets.choice("0123456789") for _ in range(_GENERATED_DIGITS))
            data["pin"] = _pin_record(generated)
            changed = True
        if changed:
            _write(data_dir, data)
        return generated


def set_pin(data_dir: str | os.PathLike[str], pin: str, setting: str = "set-pin") -> None:
    """Store a new admin PIN (hashed), keeping the session secret.

    Every admin session stops working (the session epoch goes up). A damaged
    admin.json is set aside as ``admin.json.damaged`` and replaced: this is
    the repair the admin pages point to.

    :raises PinFormatError: ``pin`` breaks the PIN rule (the error names ``setting``).
    :raises AdminFileError: admin.json cannot be written.
    """
    check_pin_format(pin, setting)
    with _file_lock:
        try:
            data = _read(data_dir) or {}
        except AdminFileError:
            path = _path(data_dir)
            try:
                os.replace(path, path.with_name(ADMIN_FILE + ".damaged"))
            except OSError as exc:
                raise AdminFileError(f"cannot set {path} aside: {exc}") from None
            data = {}
        if not isinstance(data.get("secret"), str) or len(data["secret"]) < 32:
            data["secret"] = secrets.token_hex(32)
        data["pin"] = _pin_record(pin)
        data["session_epoch"] = _epoch(data) + 1
        _write(data_dir, data)


def _epoch(data: dict[str, Any]) -> int:
    value = data.get("session_epoch", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def admin_problem(data_dir: str | os.PathLike[str]) -> str | None:
    """Why admin access is off (admin.json damaged or without a PIN), else None."""
    try:
        data = _read(data_dir)
    except AdminFileError as exc:
        return f"{REPAIR_HINT} ({exc})"
    record = data.get("pin") if data else None
    if not (isinstance(record, dict) and "hash" in record):
        return f"{REPAIR_HINT} (no PIN stored)"
    return None


def session_secret(data_dir: str | os.PathLike[str]) -> str:
    """The stored session secret.

    :raises AdminFileError: no admin.json yet (call :func:`ensure_admin` first).
    """
    data = _read(data_dir)
    if data is None or not isinstance(data.get("secret"), str):
        raise AdminFileError(f"{_path(data_dir)} has no session secret")
    return str(data["secret"])


def check_pin(data_dir: str | os.PathLike[str], pin: str) -> bool:
    """True when ``pin`` is the stored admin PIN (constant-time compare)."""
    if not pin or len(pin) > 64:
        return False
    try:
        data = _read(data_dir)
    except AdminFileError:
        return False
    record = data.get("pin") if data else None
    return isinstance(record, dict) and _matches(record, pin)


def pin_fingerprint(data_dir: str | os.PathLike[str]) -> str:
    """A short value that changes whenever the PIN is set or the session epoch
    goes up (binds sessions to both); "" when there is no usable PIN record."""
    try:
        data = _read(data_dir)
    except AdminFileError:
        return ""
    record = data.get("pin") if data else None
    if not isinstance(record, dict) or not data:
        return ""
    seed = f"{record.get('salt', '')}:{_epoch(data)}"
    return hashlib.sha256(seed.encode()).hexdigest()[:16]


# -- sessions --------------------------------------------------------------


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


# -- CSRF ------------------------------------------------------------------

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


# -- rate limiting ---------------------------------------------------------

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
        """:func:`check_pin` within the cap; None when no turn came within ``wait``."""
        if not self._slots.acquire(timeout=self.wait):
            return None
        try:
            return check_pin(data_dir, pin)
        finally:
            self._slots.release()
