"""The test tools are pinned, so CI breaks only when the code does."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in (ROOT / "constraints-dev.txt").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, sep, version = line.partition("==")
            assert sep and version, f"constraints-dev.txt: not an exact pin: {line!r}"
            pins[_name(name)] = version
    return pins


def test_dev_tools_every_dev_and_runtime_requirement_is_pinned() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = [*project["dependencies"], *project["optional-dependencies"]["dev"]]
    pins = _pins()
    missing = [_name(r) for r in wanted if _name(r) not in pins]
    assert not missing, f"not pinned in constraints-dev.txt: {missing}"


def test_dev_tools_setup_uses_the_pins_for_dev_installs() -> None:
    setup = (ROOT / "setup.sh").read_text()
    assert "-c constraints-dev.txt" in setup


def test_mypy_strict_covers_every_python_file_but_the_micropython_code() -> None:
    """strict over the whole repository: a new folder of Python is checked too (the
    MicroPython firmware and its checks have their own, tests/firmware/test_micropython.py)."""
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert mypy["strict"] is True
    assert "overrides" not in mypy  # no module checked less strictly
    excluded = [re.compile(pattern) for pattern in mypy["exclude"]]
    micropython = ("firmware/micropython/", "firmware/pico/", "tests/firmware/mpy_")
    unchecked = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith((".", "build/")) or "/." in rel or rel.startswith(micropython):
            continue
        checked = any(rel.startswith(f"{top}/") for top in mypy["files"])
        if not checked or any(pattern.search(rel) for pattern in excluded):
            unchecked.append(rel)
    assert unchecked == []
