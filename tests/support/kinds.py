"""The kind of each test, as pytest markers, found from what the test runs.

``broker`` (a real Mosquitto), ``browser`` (a real Chromium), ``crash`` (a process
killed, or the power-cut crash states under strace) and ``slow`` (any of those, or a
child process: the ``gg-arbiter`` command, a served hub, MicroPython) are put on a
test by :func:`mark`, from conftest's collection hook, not by hand: a test is read
for what it starts, in its own code, its fixtures' code and (a few calls deep) the
helpers of ``tests`` they call, so a new test is marked as soon as it starts a
broker through ``venue()`` or a child through ``Session``. The one mark written by
hand is ``@pytest.mark.slow`` on an in-process test that takes seconds of real
time (a selftest playing every tune, a button held, a timeout waited out). So

    pytest -m "not slow"     the pure and in-process tests: the quick inner loop
    pytest -m broker         only the broker tests (and so on)

and plain ``pytest`` (README, ``.ci/run``) runs them all.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

#: The kinds, registered (with what each means) in pyproject.toml's pytest markers.
KINDS = ("broker", "browser", "crash", "slow")

_REACHED = {
    "broker": re.compile(r"\bMosquitto\(|\btls_mosquitto\(|require_tool\(\"mosquitto"),
    "browser": re.compile(r"\bsync_playwright\b|require_tool\(\"chromium\"\)"),
    "slow": re.compile(
        r"\bsubprocess\.(run|Popen|check_call|check_output|call)\b|\bos\.fork\(|"
        r"\bmultiprocessing\b|require_tool\("
    ),
}
#: Only in the test's own code, its fixtures' and its module's helpers': the shared
#: helpers kill their children whenever they clean up.
_OWN = {
    "crash": re.compile(
        r"\bSIGKILL\b|kill -9|\bbroker\.kill\(\)|\bexplore\(|require_tool\(\"strace\"\)"
    )
}
#: How many calls deep a test's helpers are read.
_DEPTH = 6
#: A module's own top-level call (``require_tool("strace")``), not its docstring.
_TOP_CALL = re.compile(r"[A-Za-z_][\w.]*\(")
#: A name called (``venue(``, ``Mosquitto(``): a class named only as a type is not run.
_CALLED = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\(")

_source_cache: dict[int, tuple[str, list[Any]]] = {}


def _globals_of(obj: Any) -> dict[str, Any]:
    module = sys.modules.get(getattr(obj, "__module__", "") or "")
    return vars(module) if isinstance(module, ModuleType) else {}


def _source_and_callees(obj: Any) -> tuple[str, list[Any]]:
    """``obj``'s source, and the functions and classes of ``tests`` it calls."""
    key = id(obj)
    if key not in _source_cache:
        try:
            source = inspect.getsource(obj)
        except (OSError, TypeError):
            source = ""
        names = _globals_of(obj)
        callees = []
        for name in set(_CALLED.findall(source)):
            target = names.get(name)
            if (
                target is not obj
                and (inspect.isfunction(target) or inspect.isclass(target))
                and str(getattr(target, "__module__", "")).startswith("tests")
            ):
                callees.append(target)
        _source_cache[key] = (source, callees)
    return _source_cache[key]


def _reached_sources(roots: list[Any]) -> list[str]:
    seen: set[int] = set()
    sources: list[str] = []
    layer = roots
    for _ in range(_DEPTH):
        following: list[Any] = []
        for obj in layer:
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            source, callees = _source_and_callees(obj)
            sources.append(source)
            following += callees
        layer = following
    return sources


_module_cache: dict[str, str] = {}


def _module_level(module: ModuleType | None) -> str:
    """The module's own top-level calls (a module-level ``require_tool``)."""
    if module is None:
        return ""
    if module.__name__ not in _module_cache:
        try:
            lines = inspect.getsource(module).splitlines()
        except (OSError, TypeError):
            lines = []
        _module_cache[module.__name__] = "\n".join(
            line for line in lines if _TOP_CALL.match(line)
        )
    return _module_cache[module.__name__]


def kinds_of(item: pytest.Item) -> set[str]:
    """The kinds (markers of :data:`KINDS`) the test ``item`` is."""
    function: Callable[..., Any] | None = getattr(item, "function", None)
    if function is None:
        return set()
    own: list[Any] = [function]
    info = getattr(item, "_fixtureinfo", None)
    for defs in getattr(info, "name2fixturedefs", {}).values():
        own += [fixturedef.func for fixturedef in defs]
    # ... and the helpers the test module defines for itself, called from them.
    module_name = getattr(function, "__module__", "")
    own += [callee for obj in list(own) for callee in _source_and_callees(obj)[1]
            if callee.__module__ == module_name]
    own_text = "\n".join(_source_and_callees(obj)[0] for obj in own)
    own_text += "\n" + _module_level(getattr(item, "module", None))
    reached = "\n".join(_reached_sources(own)) + "\n" + own_text
    found = {kind for kind, pattern in _REACHED.items() if pattern.search(reached)}
    found |= {kind for kind, pattern in _OWN.items() if pattern.search(own_text)}
    if found:
        found.add("slow")
    return found


def mark(items: list[pytest.Item]) -> None:
    """Put each test's kinds on it as markers (the collection hook's work)."""
    for item in items:
        for kind in sorted(kinds_of(item)):
            item.add_marker(getattr(pytest.mark, kind))
