"""The status page and JSON API: a Flask app over a running arbiter device.

``create_app(device)`` builds the app; :func:`web.serve.make_server` serves it
with waitress. Views use the device only through
:class:`arbiter.device.protocol.DeviceView` (its status, its games, its
commands); they never touch hardware or the record directly, and nothing
public names a rank while a game is on.
"""

from __future__ import annotations

import logging
import secrets
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from flask import Flask, Response, jsonify, render_template, request
from flask.typing import ResponseReturnValue
from werkzeug.exceptions import HTTPException, InternalServerError

from arbiter.device.protocol import DeviceView
from web import auth
from web.body import MAX_BODY_BYTES
from web.events import KEEPALIVE_SECONDS, STREAM_CAPACITY, StreamHub

log = logging.getLogger(__name__)

#: Everything the page loads comes from this server; no inline script or style.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "media-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)

SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Permissions-Policy": "camera=(), microphone=(), geolocation=()",
}


def create_app(device: DeviceView, test_config: dict[str, Any] | None = None) -> Flask:
    """Build the web app for ``device`` (an :class:`arbiter.device.arbiter.Arbiter`);
    the app uses only what :class:`~arbiter.device.protocol.DeviceView` offers.

    ``test_config`` overrides settings: ``ADMIN_PIN`` (else the config file's
    ``web.admin_pin``), ``DATA_DIR`` (else the device's), ``SSE_KEEPALIVE``
    seconds, ``STREAM_CAPACITY`` event streams open at once (more get 503;
    :func:`web.serve.make_server` sets it to its ``streams``), ``STREAM_RETRY_SECONDS``
    before a refused page tries its stream again (it polls meanwhile),
    ``PIN_MAX_FAILURES`` per ``PIN_WINDOW_SECONDS`` (per address; across all of them
    ``PIN_GLOBAL_BURST``, then one per ``PIN_GLOBAL_INTERVAL`` s), ``PIN_CHECK_LIMIT``
    PIN hash checks at once (callers over it wait up to ``PIN_CHECK_WAIT``
    seconds, then get 503), ``ADMIN_IDLE_SECONDS`` without a request that end
    an admin session (``PERMANENT_SESSION_LIFETIME`` ends it in any case),
    ``ADMIN_CLOCK`` (the monotonic clock sessions and PIN limits are timed on), ``TESTING``.
    A PIN generated on first run is printed once to standard error (and kept
    in ``app.config["NEW_ADMIN_PIN"]`` for the caller).

    A damaged admin.json does not stop the app: the public pages work, and
    admin pages and API answer 503 saying how to repair it (``set-pin``).

    :raises web.auth.PinFormatError: a configured ``ADMIN_PIN`` that breaks the PIN rule
        (:mod:`arbiter.pinrule`).
    """
    app = Flask(__name__)
    app.config.from_mapping(
        DATA_DIR=str(device.data_dir),
        ADMIN_PIN=device.admin_pin,
        SSE_KEEPALIVE=KEEPALIVE_SECONDS,
        STREAM_CAPACITY=STREAM_CAPACITY,
        STREAM_RETRY_SECONDS=30,
        **pin_access_config(cookie="gg_admin", idle_seconds=20 * 60),
    )
    if test_config:
        app.config.update(test_config)

    new_pin = install_pin_access(app, repair="gg-arbiter set-pin")
    app.config["NEW_ADMIN_PIN"] = new_pin
    if new_pin and not app.config.get("TESTING"):
        print(f"gg-arbiter: admin PIN for the web page (shown once): {new_pin}", file=sys.stderr)
    app.extensions["arbiter"] = device
    app.extensions["arbiter_streams"] = StreamHub(
        device, float(app.config["SSE_KEEPALIVE"]), int(app.config["STREAM_CAPACITY"])
    )

    from web.admin import bp as admin_bp
    from web.public import bp as public_bp
    from web.sim import bp as sim_bp

    app.register_blueprint(public_bp)
    app.register_blueprint(admin_bp)
    app.register_blueprint(sim_bp)

    _install_hooks(app)
    return app


def _is_api() -> bool:
    return request.path.startswith("/api/")


def _install_hooks(app: Flask) -> None:
    @app.after_request
    def security_headers(response: Response) -> Response:
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        if request.path.startswith("/api/") or request.path.startswith("/admin"):
            response.headers.setdefault("Cache-Control", "no-store")
        return response

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> ResponseReturnValue:
        code = error.code or 500
        message = error.description or error.name
        extra = [(k, v) for k, v in error.get_headers() if k.lower() != "content-type"]
        if _is_api():
            response = jsonify({"error": message})
            response.status_code = code
            response.headers.extend(extra)
            return response
        page = render_template("error.html", code=code, title=error.name, message=message)
        return page, code, extra

    @app.errorhandler(Exception)
    def unexpected_error(error: Exception) -> ResponseReturnValue:
        log.exception("unexpected error serving %s", request.path)
        wrapped = InternalServerError()
        if _is_api():
            return jsonify({"error": "internal error; see the arbiter's log"}), 500
        return (
            render_template(
                "error.html", code=500, title=wrapped.name, message="Something went wrong."
            ),
            500,
        )

    @app.context_processor
    def page_globals() -> dict[str, Any]:
        from flask import session

        device: DeviceView = app.extensions["arbiter"]
        return {
            "csrf_token": lambda: auth.csrf_token(session),
            "sim_mode": device.is_simulator,
            "server_now": time.time(),
            "stream_retry": app.config["STREAM_RETRY_SECONDS"],
        }


def pin_access_config(*, cookie: str, idle_seconds: float) -> dict[str, Any]:
    """The settings :func:`install_pin_access` reads, with their defaults: PIN attempts
    (5 per 300 s, 2 checks at a time for up to 10 s), a Strict, HTTP-only session
    cookie named ``cookie`` for 12 h ended after ``idle_seconds`` idle, body size limit."""
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


def install_pin_access(app: Flask, *, repair: str) -> str | None:
    """Set up PIN access for ``app`` from its ``DATA_DIR``: the admin file, the session
    secret, the attempt limiter, the session registry and the PIN-check gate.

    Returns a PIN generated on this first run (None otherwise). A damaged admin file
    is logged with the ``repair`` command and leaves PIN access off, never the app.
    """
    new_pin: str | None = None
    secret: str | None = None
    data_dir = Path(app.config["DATA_DIR"])
    try:
        new_pin = auth.ensure_admin(data_dir, app.config["ADMIN_PIN"])
        secret = auth.session_secret(data_dir)
    except auth.AdminFileError as exc:
        # The public pages must not depend on the admin file; admin routes say how to repair.
        log.error("admin access off: %s; repair with `%s`", exc, repair)
    if not app.config.get("SECRET_KEY"):
        # Without the stored secret, one for this run only: sessions end at restart anyway.
        app.config["SECRET_KEY"] = secret or secrets.token_hex(32)
    app.extensions["arbiter_limiter"] = auth.AttemptLimiter(
        int(app.config["PIN_MAX_FAILURES"]),
        float(app.config["PIN_WINDOW_SECONDS"]),
        clock=app.config["ADMIN_CLOCK"],
        global_burst=int(app.config["PIN_GLOBAL_BURST"]),
        global_interval=float(app.config["PIN_GLOBAL_INTERVAL"]),
    )
    app.extensions["arbiter_sessions"] = auth.SessionRegistry(
        idle=float(app.config["ADMIN_IDLE_SECONDS"]),
        lifetime=app.permanent_session_lifetime.total_seconds(),
        clock=app.config["ADMIN_CLOCK"],
    )
    app.extensions["arbiter_pin_gate"] = auth.PinGate(
        int(app.config["PIN_CHECK_LIMIT"]), float(app.config["PIN_CHECK_WAIT"])
    )
    return new_pin
