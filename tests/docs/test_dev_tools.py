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
    micropython = ("firmware/pico/", "tests/firmware/mpy_")
    unchecked = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith((".", "build/")) or "/." in rel or rel.startswith(micropython):
            continue
        checked = any(rel.startswith(f"{top}/") for top in mypy["files"])
        if not checked or any(pattern.search(rel) for pattern in excluded):
            unchecked.append(rel)
    assert unchecked == []


# -- the lock files: installs that stay as tested ------------------------------------

LOCKS = {"requirements.lock": (), "requirements-pi.lock": ("pi",)}


def _canonical(name: str) -> str:
    """A distribution's name as PEP 503 compares it (RPi.GPIO is rpi-gpio)."""
    from packaging.utils import canonicalize_name

    return str(canonicalize_name(_name(name)))


def _locked(lock: str) -> dict[str, tuple[str, str, int]]:
    """name -> (version, marker, number of hashes) of every requirement in ``lock``."""
    from packaging.requirements import Requirement

    entries: dict[str, tuple[str, str, int]] = {}
    text = (ROOT / lock).read_text(encoding="utf-8")
    for block in re.split(r"\n(?=\S)", text):
        head = block.split("\\", 1)[0].strip()
        if not head or head.startswith("#"):
            continue
        requirement = Requirement(head)
        (spec,) = requirement.specifier  # exactly one ==
        assert spec.operator == "==", f"{lock}: not an exact pin: {head}"
        hashes = len(re.findall(r"--hash=sha256:[0-9a-f]{64}", block))
        marker = str(requirement.marker) if requirement.marker else ""
        entries[_canonical(requirement.name)] = (spec.version, marker, hashes)
    return entries


def test_every_locked_requirement_is_exact_and_hashed() -> None:
    for lock in LOCKS:
        entries = _locked(lock)
        assert entries, lock
        assert all(hashes for _, _, hashes in entries.values()), lock


def test_the_locks_agree_with_pyproject() -> None:
    """A dependency added to or raised in pyproject.toml without `bash scripts/lock.sh`
    fails here: each one is locked at a version its specifier takes (and the Pi
    libraries only in the Pi lock, for ARM only)."""
    from packaging.requirements import Requirement

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for lock, extras in LOCKS.items():
        entries = _locked(lock)
        wanted = [Requirement(r) for r in project["dependencies"]]
        for extra in extras:
            wanted += [Requirement(r) for r in project["optional-dependencies"][extra]]
        for requirement in wanted:
            name = _canonical(requirement.name)
            assert name in entries, f"{lock} lacks {name}: run bash scripts/lock.sh"
            version, marker, _ = entries[name]
            assert requirement.specifier.contains(version, prereleases=True), (
                f"{lock}: {name}=={version} is outside pyproject's {requirement.specifier}")
            if requirement.marker:  # the same machines, whatever the order of the terms
                from packaging.markers import Marker

                machines = ("x86_64", "aarch64", "armv7l", "armv6l", "arm64", "i686")
                assert marker, (lock, name)
                assert [Marker(marker).evaluate({"platform_machine": m}) for m in machines] == [
                    requirement.marker.evaluate({"platform_machine": m}) for m in machines
                ], (lock, name, marker)
        pi_only = {_canonical(Requirement(r).name) for r in project["optional-dependencies"]["pi"]}
        assert (pi_only <= set(entries)) == ("pi" in extras), lock


def test_the_test_tools_pins_and_the_locks_name_the_same_versions() -> None:
    """setup.sh --dev installs the lock, then the test tools under constraints-dev.txt:
    a package both name must be at one version, or the second install moves it."""
    pins = {_canonical(name): version for name, version in _pins().items()}
    for lock in LOCKS:
        differ = {name: (version, pins[name]) for name, (version, _, _) in _locked(lock).items()
                  if name in pins and pins[name] != version}
        assert differ == {}, f"{lock} and constraints-dev.txt differ: {differ}"


def test_setup_and_the_appliance_install_from_the_locks() -> None:
    setup = (ROOT / "setup.sh").read_text()
    appliance = (ROOT / "scripts" / "appliance" / "appliance.sh").read_text()
    assert 'install --require-hashes -r "$lock"' in setup
    assert "lock=requirements.lock" in setup and "lock=requirements-pi.lock" in setup
    # The table's install takes the Pi lock; the venue's (hub.sh) the plain one off a Pi.
    assert '--require-hashes -r "$R$GG_PREFIX/src/$lock"' in appliance
    assert 'lock="${2:-requirements-pi.lock}"' in appliance
    hub = (ROOT / "scripts" / "appliance" / "hub.sh").read_text()
    assert "lock=requirements.lock" in hub and "lock=requirements-pi.lock" in hub
    assert '--no-deps "$R$GG_PREFIX/src"' in appliance
