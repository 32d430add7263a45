"""Request bodies: the size limit and the one JSON reader every JSON route uses."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from flask import Flask, abort, request

from arbiter.logthrottle import LogThrottle
from arbiter.wire import has_lone_surrogate

log = logging.getLogger(__name__)
#: Bodies refused for their text, logged per address within the one log rule.
_REFUSED = LogThrottle()

#: The largest request body the server takes (waitress and Flask alike); the
#: API's bodies are a few dozen bytes.
MAX_BODY_BYTES = 64 * 1024
#: The app's setting of the routes that take a bigger body (an event's file): path to
#: its most bytes. Waitress (:func:`web.kit.serve.make_server`) and Flask both read it.
BODY_LIMITS = "BODY_LIMITS"


def install_body_limits(app: Flask, limits: Mapping[str, int]) -> None:
    """Let the routes at ``limits``' paths take bodies of up to their number of bytes,
    every other route staying at MAX_BODY_BYTES (a form's pasted text included)."""
    app.config[BODY_LIMITS] = dict(limits)

    @app.before_request
    def _route_limit() -> None:
        limit = app.config[BODY_LIMITS].get(request.path)
        if limit is not None:
            request.max_content_length = limit
            request.max_form_memory_size = limit


def body_limits(app: Flask) -> dict[str, int]:
    """The app's bigger limits by path (none unless :func:`install_body_limits` ran)."""
    return dict(app.config.get(BODY_LIMITS) or {})


def json_object(expected: str = "a JSON object") -> dict[str, Any]:
    """The request body as a JSON object (any Content-Type).

    Aborts 413 when the body is too large and 400 ``{"error": ...}`` when it is
    not JSON at all (bad syntax or encoding, nesting too deep to parse), not
    an object, or holding a lone surrogate (half a UTF-16 pair, from a ``\\u``
    escape: text no ledger, file or page can hold).
    """
    raw = request.get_data(cache=True)  # 413 past MAX_CONTENT_LENGTH
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError, TypeError):  # UnicodeDecodeError is a ValueError
        abort(400, description=f"the body must be {expected}: it is not valid JSON")
    if not isinstance(body, dict):
        abort(400, description=f"the body must be {expected}")
    if has_lone_surrogate(raw.decode(json.detect_encoding(raw), "replace"), body):
        client = request.remote_addr or "unknown"
        line = _REFUSED.note(client)
        if line is not None:
            log.warning("refused a request body from %s: a lone surrogate in its text"
                        " (%d from this address so far, %d lines held back)", client, *line)
        abort(400, description="the body's text holds a lone surrogate (half of a UTF-16"
                               " pair in a \\u escape): send whole characters")
    return body
