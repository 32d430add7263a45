"""The wire's JSON: UTF-8 text whose every number is finite and within
:data:`~arbiter.wire.messages.MAX_INT`, and no string holds half a character."""

from __future__ import annotations

import json
import math
import re

from arbiter.wire.errors import WireFormatError
from arbiter.wire.messages import MAX_INT


def loads(raw: bytes) -> object:
    """JSON of a payload with every number finite and within :data:`MAX_INT`.

    :raises WireFormatError: not UTF-8 JSON, or a number out of bounds.
    """
    try:
        text = raw.decode("utf-8")
        data = json.loads(text, parse_int=_int_literal, parse_float=_float_literal,
                          parse_constant=_constant)
    except WireFormatError:
        raise
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise WireFormatError(f"not JSON: {type(exc).__name__}") from None
    if has_lone_surrogate(text, data):
        raise WireFormatError("not JSON text: a \\u escape names half a character"
                              " (a lone surrogate)")
    return data


#: A ``\u`` escape of a UTF-16 surrogate: only JSON escapes can put one in a string.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def has_lone_surrogate(text: str, data: object) -> bool:
    """Whether ``data``, parsed from the JSON ``text``, holds a lone surrogate (half of a
    UTF-16 pair) in a string or a key: text no UTF-8 file, database or page can hold.
    Read only when ``text`` escapes a surrogate at all (a pair makes one character)."""
    if not _SURROGATE_ESCAPE.search(text):
        return False
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _int_literal(text: str) -> int:
    if len(text) > 17:  # 2**53 has 16 digits: refuse long ones before converting
        raise WireFormatError(f"a number of {len(text)} digits")
    value = int(text)
    if abs(value) > MAX_INT:
        raise WireFormatError(f"the number {value} is out of range")
    return value


def _float_literal(text: str) -> float:
    value = float(text[:64]) if len(text) <= 64 else math.inf
    if not math.isfinite(value) or abs(value) > MAX_INT:
        raise WireFormatError(f"the number {text[:24]} is out of range")
    return value


def _constant(text: str) -> float:
    raise WireFormatError(f"{text} is not a number the wire carries")
