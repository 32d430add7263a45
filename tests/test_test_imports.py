"""Test modules never import each other: shared helpers live in tests/support,
shared fixtures in conftest.py files."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _is_test_module(dotted: str) -> bool:
    return any(part.startswith("test_") for part in dotted.split("."))


def imported_test_modules(source: str) -> list[str]:
    """The test modules ``source`` imports (absolute, relative or by ``from pkg import``)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if _is_test_module(alias.name)]
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            if _is_test_module(base):
                found.append(base)
            else:
                found += [
                    f"{base}.{alias.name}" for alias in node.names if _is_test_module(alias.name)
                ]
    return found


def test_no_test_module_imports_another() -> None:
    offenders = {
        str(path.relative_to(TESTS)): imported
        for path in sorted(TESTS.rglob("*.py"))
        if (imported := imported_test_modules(path.read_text(encoding="utf-8")))
    }
    assert offenders == {}


def test_the_check_sees_every_form_of_import() -> None:
    source = (
        "import tests.device.test_device\n"
        "from tests.drivers.test_signals import _record_frequencies\n"
        "from tests.rules import test_verdict\n"
        "from .test_sim import gg_arbiter\n"
        "from tests.support.rig import Rig\n"
        "import pytest\n"
    )
    assert imported_test_modules(source) == [
        "tests.device.test_device",
        "tests.drivers.test_signals",
        "tests.rules.test_verdict",
        ".test_sim",
    ]
