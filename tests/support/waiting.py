"""Waiting on a condition instead of sleeping a fixed time."""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: Seconds to wait before giving up; generous, so a loaded machine never fails a
#: test that works: the wait ends as soon as the condition holds.
WAIT = 10.0
#: Seconds between two looks at the condition.
STEP = 0.005


def wait_until(predicate: Callable[[], T], timeout: float = WAIT, *, what: str = "") -> T:
    """Poll ``predicate`` until it returns something truthy and return that value.

    :raises AssertionError: naming ``what`` (by default the predicate's source
        line) after ``timeout`` s.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            name = what or _source(predicate)
            raise AssertionError(f"waited {timeout} s for {name}; last value {value!r}")
        time.sleep(STEP)


def _source(predicate: Callable[[], object]) -> str:
    """The source line(s) of ``predicate`` (a lambda names its condition), else its name."""
    try:
        return inspect.getsource(predicate).strip()
    except (OSError, TypeError):
        return getattr(predicate, "__qualname__", repr(predicate))
