"""PIN access for a Flask app set up by :func:`install_pin_access`: the table's admin
pages and the hub's organiser pages share it, each with its own words and login page.

The state lives in the app (its ``DATA_DIR`` admin file and the extensions
``arbiter_limiter``, ``arbiter_sessions``, ``arbiter_pin_gate``,
``arbiter_pin_refusals``); this holds only the checks: a damaged admin file (503 with
the repair command), a live session made with the current PIN, a PIN checked within the
client's budget, and the CSRF token.
"""

from __future__ import annotations

import functools
import logging
import secrets
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar, cast

from flask import Flask, abort, current_app, redirect, request, session, url_for
from werkzeug.exceptions import ServiceUnavailable, TooManyRequests

from arbiter.logthrottle import LogThrottle
from arbiter.pinrule import MIN_DIGITS, is_short
from web.kit import attempts, auth, sessions
from web.kit.body import MAX_BODY_BYTES
from web.kit.errors import AdminFileError

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])

_MARK_KEY = "pin"
_SESSION_KEY = "sid"


def _data_dir() -> str:
    return str(current_app.config["DATA_DIR"])


def _limiter() -> attempts.AttemptLimiter:
    return cast(attempts.AttemptLimiter, current_app.extensions["arbiter_limiter"])


def _sessions() -> sessions.SessionRegistry:
    return cast(sessions.SessionRegistry, current_app.extensions["arbiter_sessions"])


def _refusals() -> LogThrottle:
    """Refused PIN checks (429) and wrong PINs, logged per address within the one log rule."""
    return cast(LogThrottle, current_app.extensions["arbiter_pin_refusals"])


def _gate() -> attempts.PinGate:
    return cast(attempts.PinGate, current_app.extensions["arbiter_pin_gate"])


def _client() -> str:
    return request.remote_addr or "unknown"


@dataclass(frozen=True)
class PinAccess:
    """One app's PIN access: ``role`` names the PIN in answers and the log ("admin",
    "organiser"), ``realm`` goes in ``WWW-Authenticate``, ``login_endpoint`` is where a
    page sends a visitor without a session, ``repair`` the command that mends admin.json.
    """

    role: str
    realm: str
    login_endpoint: str
    repair: str

    def repair_command(self) -> str:
        """The command that mends this app's admin.json, naming its real data directory
        (as :func:`install_pin_access` was given it; ``repair`` without an app)."""
        return str(current_app.config.get("PIN_REPAIR") or self.repair)

    def require_file(self) -> None:
        """Abort 503 with the repair hint while admin.json is damaged (no PIN to check)."""
        problem = auth.admin_problem(_data_dir())
        if problem is not None:
            abort(503, description=problem.replace("gg-arbiter set-pin", self.repair_command()))

    def logged_in(self, *, renew: bool = True) -> bool:
        """True for a live session (not logged out, idle or too old) made with the
        current PIN and session epoch; each such request restarts the idle time,
        unless ``renew`` is False (a page refreshing itself in the background)."""
        mark = session.get(_MARK_KEY)
        if not (isinstance(mark, str) and mark and mark == auth.pin_fingerprint(_data_dir())):
            return False
        return _sessions().touch(session.get(_SESSION_KEY), renew=renew)

    def pin_accepted(self, pin: str) -> bool:
        """Check a PIN, counting a failure.

        The attempt is taken from the client's budget before the hash runs, so
        checks in progress count too.

        :raises TooManyRequests: 429 while the client has no attempts left.
        :raises ServiceUnavailable: 503 when too many checks are queued already.
        """
        limiter, client = _limiter(), _client()
        if not limiter.reserve(client):
            retry = limiter.retry_after(client)
            line = _refusals().note(client)
            if line is not None:  # within the one log rule: a flood writes a few lines
                log.warning("refused a PIN check (%s) from %s: too many wrong PINs, or its"
                            " turn not yet; retry in %d s (%d refused from this address so"
                            " far, %d lines held back)", self.role, client, retry, *line)
            raise TooManyRequests(
                description=f"too many wrong PINs: try again in {retry} s", retry_after=retry
            )
        outcome: bool | None = None
        try:
            outcome = _gate().check(_data_dir(), pin)
        finally:
            limiter.settle(client, outcome)
        if outcome is None:
            raise ServiceUnavailable(
                description="too many PIN checks at once: try again shortly", retry_after=2
            )
        if not outcome:
            line = _refusals().note(client)
            if line is not None:
                log.warning("wrong %s PIN from %s (%d refused from this address so far, %d"
                            " lines held back)", self.role, client, *line)
        elif is_short(pin):
            # A PIN set before the 6-digit rule still opens, but the operator is told.
            log.warning("the %s PIN is shorter than %d digits: set a longer one with `%s`",
                        self.role, MIN_DIGITS, self.repair_command())
        return outcome

    def require_api(self) -> None:
        """Abort unless the request carries the PIN, or a session and its CSRF token.

        401 when neither is given, 403 for a wrong PIN or token, 429 when rate
        limited, 503 while admin.json is damaged.
        """
        self.require_file()
        pin = request.headers.get("X-Admin-PIN")
        if pin is None:
            if self.logged_in():
                sent = request.headers.get("X-CSRF-Token")
                if request.method in ("GET", "HEAD") or sessions.csrf_ok(session, sent):
                    return
                abort(403, description="missing or wrong X-CSRF-Token for this session")
            abort(
                401,
                description=f"{self.role} PIN required (header X-Admin-PIN)",
                www_authenticate=f'PIN realm="{self.realm}"',
            )
        if not self.pin_accepted(pin.strip()):
            abort(403, description=f"wrong {self.role} PIN")

    def page(self, view: F) -> F:
        """Pages: log in first; every POST must carry the session's CSRF token."""

        @functools.wraps(view)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            self.require_file()
            if not self.logged_in():
                if request.method == "POST":
                    abort(403, description="Log in first.")
                return redirect(url_for(self.login_endpoint))
            if request.method == "POST":
                sent = request.form.get("csrf") or request.headers.get("X-CSRF-Token")
                if not sessions.csrf_ok(session, sent):
                    abort(400, description="The form has expired: reload the page and try again.")
            return view(*args, **kwargs)

        return cast(F, wrapped)

    def log_in(self, pin: str) -> bool:
        """Open a session for a right PIN (a fresh cookie and CSRF token); False if wrong.

        The login form's own CSRF token is checked first (400 when it has expired).
        """
        self.require_file()
        if not sessions.csrf_ok(session, request.form.get("csrf")):
            abort(400, description="The form has expired: reload the page and try again.")
        if not self.pin_accepted(pin.strip()):
            return False
        session.clear()
        session.permanent = True
        session[_MARK_KEY] = auth.pin_fingerprint(_data_dir())
        session[_SESSION_KEY] = _sessions().open()
        sessions.csrf_token(session)  # a fresh token for the logged-in session
        return True

    def log_out(self) -> None:
        """End the session on the server: a copy of the cookie is refused from now on."""
        _sessions().close(session.get(_SESSION_KEY))
        session.clear()


def pin_access_config(*, cookie: str, idle_seconds: float) -> dict[str, Any]:
    """The settings :func:`install_pin_access` reads, with their defaults: PIN attempts
    (5 wrong per 300 s per address; across all addresses 10, then one per 30 s; 2 checks
    at a time for up to 10 s), a Strict, HTTP-only session cookie named ``cookie`` for
    12 h ended after ``idle_seconds`` idle, body size limit."""
    return {
        "PIN_MAX_FAILURES": 5,
        "PIN_WINDOW_SECONDS": 300,
        # Across all addresses: 10 wrong PINs at once, then one per 30 s (2,880 a day:
        # a 6-digit PIN holds for months), so many addresses cannot multiply the above.
        "PIN_GLOBAL_BURST": 10,
        "PIN_GLOBAL_INTERVAL": 30.0,
        "PIN_CHECK_LIMIT": 2,
        "PIN_CHECK_WAIT": 10.0,
        "SESSION_COOKIE_NAME": cookie,
        "SESSION_COOKIE_HTTPONLY": True,
        "SESSION_COOKIE_SAMESITE": "Strict",
        "PERMANENT_SESSION_LIFETIME": timedelta(hours=12),
        "ADMIN_IDLE_SECONDS": idle_seconds,
        "ADMIN_CLOCK": time.monotonic,
        "MAX_CONTENT_LENGTH": MAX_BODY_BYTES,
    }


def install_pin_access(app: Flask, *, repair: str, shown_once: str = "") -> str | None:
    """Set up PIN access for ``app`` from its ``DATA_DIR``: the admin file, the session
    secret, the attempt limiter, the session registry and the PIN-check gate.

    Returns a PIN generated on this first run (None otherwise), also kept in
    ``app.config["NEW_ADMIN_PIN"]`` for the caller and, unless ``TESTING``, printed once
    to standard error after ``shown_once`` (what the PIN opens). A damaged admin file
    is logged with the ``repair`` command and leaves PIN access off, never the app.
    """
    new_pin: str | None = None
    secret: str | None = None
    data_dir = Path(app.config["DATA_DIR"])
    app.config["PIN_REPAIR"] = repair
    try:
        new_pin = auth.ensure_admin(data_dir, app.config["ADMIN_PIN"])
        secret = auth.session_secret(data_dir)
    except AdminFileError as exc:
        # The public pages must not depend on the admin file; admin routes say how to repair.
        log.error("admin access off: %s; repair with `%s`", exc, repair)
    if not app.config.get("SECRET_KEY"):
        # Without the stored secret, one for this run only: sessions end at restart anyway.
        app.config["SECRET_KEY"] = secret or secrets.token_hex(32)
    app.extensions["arbiter_limiter"] = attempts.AttemptLimiter(
        int(app.config["PIN_MAX_FAILURES"]),
        float(app.config["PIN_WINDOW_SECONDS"]),
        clock=app.config["ADMIN_CLOCK"],
        global_burst=int(app.config["PIN_GLOBAL_BURST"]),
        global_interval=float(app.config["PIN_GLOBAL_INTERVAL"]),
    )
    app.extensions["arbiter_sessions"] = sessions.SessionRegistry(
        idle=float(app.config["ADMIN_IDLE_SECONDS"]),
        lifetime=app.permanent_session_lifetime.total_seconds(),
        clock=app.config["ADMIN_CLOCK"],
    )
    app.config["NEW_ADMIN_PIN"] = new_pin
    if new_pin and not app.config.get("TESTING"):
        print(f"{shown_once}: {new_pin}", file=sys.stderr)
    app.extensions["arbiter_pin_refusals"] = LogThrottle(clock=app.config["ADMIN_CLOCK"])
    app.extensions["arbiter_pin_gate"] = attempts.PinGate(
        int(app.config["PIN_CHECK_LIMIT"]), float(app.config["PIN_CHECK_WAIT"])
    )
    return new_pin
