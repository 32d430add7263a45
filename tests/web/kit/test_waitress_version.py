"""web/kit/serve.py subclasses waitress internals (ErrorTask, HTTPChannel, the dispatcher),
so only the waitress the tests ran on may serve: pyproject.toml's specifier records
that range, in one place."""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[3]


def _waitress() -> Requirement:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    (found,) = [r for r in map(Requirement, project["dependencies"]) if r.name == "waitress"]
    return found


def test_waitress_has_an_upper_bound() -> None:
    """A new minor may change the internals: the range ends below it."""
    assert any(spec.operator == "<" for spec in _waitress().specifier)


def test_the_installed_waitress_is_the_tested_one() -> None:
    installed = importlib.metadata.version("waitress")
    specifier = _waitress().specifier
    assert specifier.contains(installed), (
        f"waitress {installed} is outside the tested range {specifier} (pyproject.toml): "
        "run the suite on it, then raise the bound")
