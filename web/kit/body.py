"""Request bodies: the size limit and the one JSON reader every JSON route uses."""

from __future__ import annotations

import json
from typing import Any

from flask import abort, request

#: The largest request body the server takes (waitress and Flask alike); the
#: API's bodies are a few dozen bytes.
MAX_BODY_BYTES = 64 * 1024


def json_object(expected: str = "a JSON object") -> dict[str, Any]:
    """The request body as a JSON object (any Content-Type).

    Aborts 413 when the body is too large and 400 ``{"error": ...}`` when it is
    not JSON at all (bad syntax or encoding, nesting too deep to parse) or not
    an object.
    """
    raw = request.get_data(cache=True)  # 413 past MAX_CONTENT_LENGTH
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError, TypeError):  # UnicodeDecodeError is a ValueError
        abort(400, description=f"the body must be {expected}: it is not valid JSON")
    if not isinstance(body, dict):
        abort(400, description=f"the body must be {expected}")
    return body
