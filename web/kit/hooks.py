"""What every page of both apps shares: security headers, error pages and page globals.

:func:`install_hooks` is called once by each app factory (the table's
:func:`web.table.create_app` and the hub's :func:`web.hub.create_hub_app`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from flask import Flask, Response, jsonify, render_template, request, session
from flask.typing import ResponseReturnValue
from werkzeug.exceptions import HTTPException, InternalServerError

from arbiter.logthrottle import LogThrottle
from web.kit import sessions

log = logging.getLogger(__name__)
#: Unexpected errors, logged (with their traceback) by the one log rule, per path: a
#: request that fails the same way again and again cannot fill the log.
_FAILED = LogThrottle()

#: Everything a page loads comes from its own server; no inline script or style.
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


def _is_api() -> bool:
    return request.path.startswith("/api/")


def install_hooks(
    app: Flask,
    *,
    private_prefixes: tuple[str, ...],
    error_template: str,
    page_globals: Callable[[], dict[str, Any]],
) -> None:
    """Install the shared hooks on ``app``.

    Every response gets :data:`SECURITY_HEADERS`; those under ``/api/`` or one of
    ``private_prefixes`` are never cached. An HTTP error answers JSON under ``/api/``
    and ``error_template`` elsewhere; an unexpected exception is logged and answers a
    plain 500 that names nothing of it. Templates see ``csrf_token()`` plus what
    ``page_globals()`` returns.
    """
    no_store = ("/api/", *private_prefixes)

    @app.after_request
    def security_headers(response: Response) -> Response:
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        if request.path.startswith(no_store):
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
        page = render_template(error_template, code=code, title=error.name, message=message)
        return page, code, extra

    @app.errorhandler(Exception)
    def unexpected_error(error: Exception) -> ResponseReturnValue:
        line = _FAILED.note(request.path)
        if line is not None:
            log.exception("unexpected error serving %s (%d so far on this path, %d lines"
                          " held back)", request.path, *line)
        if _is_api():
            return jsonify({"error": "internal error; see the log"}), 500
        wrapped = InternalServerError()
        page = render_template(
            error_template, code=500, title=wrapped.name, message="Something went wrong."
        )
        return page, 500

    @app.context_processor
    def globals_for_pages() -> dict[str, Any]:
        return {"csrf_token": lambda: sessions.csrf_token(session), **page_globals()}
