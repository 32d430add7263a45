"""What the appliance installs (``setup.sh --service`` and ``--hub`` run ``pip install
--no-deps /opt/gg-arbiter/src``, not an editable install): the project's wheel, which
must hold every module and data file of ``arbiter/`` and ``web/``, or the installed
``gg-arbiter`` cannot start (a package list kept by hand once left five packages out)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.support.fake_system import ROOT

#: The files of the project a wheel is built from (pyproject.toml names README.md).
SOURCES = ("pyproject.toml", "README.md", "arbiter", "web")
PACKAGES = ("arbiter", "web")


def source_files() -> set[str]:
    """Every file under arbiter/ and web/ (caches left out), as paths in a wheel."""
    return {
        path.relative_to(ROOT).as_posix()
        for top in PACKAGES
        for path in (ROOT / top).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


def test_the_wheel_holds_every_module_and_data_file(tmp_path: Path) -> None:
    src, out = tmp_path / "src", tmp_path / "dist"
    src.mkdir()
    out.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, src / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / name, src / name)
    # setuptools' own PEP 517 hook, as pip calls it (without fetching a build environment).
    build = ("import sys; from setuptools import build_meta; "
             "print(build_meta.build_wheel(sys.argv[1]))")
    done = subprocess.run([sys.executable, "-c", build, str(out)], cwd=src,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    wheel = out / done.stdout.strip().splitlines()[-1]
    with zipfile.ZipFile(wheel) as archive:
        shipped = set(archive.namelist())
    missing = sorted(source_files() - shipped)
    assert missing == [], f"not in the installed project: {missing}"
    assert "arbiter/app/commands/hub.py" in shipped  # the command the hub's unit runs
    entry = next(name for name in shipped if name.endswith(".dist-info/entry_points.txt"))
    with zipfile.ZipFile(wheel) as archive:
        assert "gg-arbiter = arbiter.app.cli:main" in archive.read(entry).decode()
