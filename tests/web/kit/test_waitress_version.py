"""web/kit/serve.py subclasses waitress internals (ErrorTask, HTTPChannel, the dispatcher),
and web/kit/ahttp.py uvicorn's (H11Protocol), so only the versions the tests ran on may
serve: pyproject.toml's specifiers record those ranges, in one place."""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[3]
SUBCLASSED = ("waitress", "uvicorn")


def _requirement(name: str) -> Requirement:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    (found,) = [r for r in map(Requirement, project["dependencies"]) if r.name == name]
    return found


@pytest.mark.parametrize("name", SUBCLASSED)
def test_a_subclassed_server_has_an_upper_bound(name: str) -> None:
    """A new minor may change the internals: the range ends below it."""
    assert any(spec.operator == "<" for spec in _requirement(name).specifier)


@pytest.mark.parametrize("name", SUBCLASSED)
def test_the_installed_server_is_the_tested_one(name: str) -> None:
    installed = importlib.metadata.version(name)
    specifier = _requirement(name).specifier
    assert specifier.contains(installed), (
        f"{name} {installed} is outside the tested range {specifier} (pyproject.toml): "
        "run the suite on it, then raise the bound")
