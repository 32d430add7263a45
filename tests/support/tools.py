"""The one place that decides what a test does when a tool it needs is not installed.

Under CI (the environment variable ``CI`` set, as ``.ci/run`` does) a missing tool is
a broken install, so the test fails; on a developer's machine it is skipped, saying
how to install it. Every test that needs Mosquitto, Chromium, strace,
systemd-analyze, OpenSCAD or MicroPython asks :func:`require_tool` (or
:func:`missing`), never ``shutil.which`` and ``pytest.skip`` by itself.
"""

from __future__ import annotations

import os
import shutil
from typing import NoReturn

import pytest

#: Where Debian puts daemons (mosquitto), off a normal user's PATH. Searched only
#: outside CI: there the PATH is the job's own (``.ci/run`` adds these to it), so a
#: tool hidden from it fails the tests that need it.
SBIN_DIRS = ("/usr/local/sbin", "/usr/sbin", "/sbin")

#: How to install each tool: a Debian package that ``bash setup.sh --dev`` installs.
INSTALL = {
    "mosquitto": "Debian package mosquitto",
    "mosquitto_passwd": "Debian package mosquitto-clients",
    "chromium": "Debian package chromium",
    "strace": "Debian package strace",
    "systemd-analyze": "Debian package systemd",
    "openscad": "Debian package openscad",
    "xvfb-run": "Debian package xvfb",
    "prusa-slicer": "Debian package prusa-slicer",
    "dot": "Debian package graphviz",
}


def in_ci() -> bool:
    """True when running as CI (``CI`` set to anything but empty, 0 or false)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def missing(what: str) -> NoReturn:
    """A needed tool is absent: fail under CI, else skip. ``what`` says which and why.

    Also usable at module level (a skip then skips the module; a failure is a
    collection error, which fails the run).
    """
    message = f"{what} (bash setup.sh --dev installs it)"
    if in_ci():
        pytest.fail(f"CI must run this test, but {message}", pytrace=False)
    pytest.skip(message, allow_module_level=True)


def find_tool(name: str) -> str | None:
    """The tool's path: on the PATH, and outside CI in the system's sbin directories too."""
    found = shutil.which(name)
    if found is None and not in_ci():
        found = shutil.which(name, path=os.pathsep.join(SBIN_DIRS))
    return found


def require_tool(name: str) -> str:
    """The path of the command ``name``; when it is not installed the test fails under
    CI and is skipped elsewhere (see :func:`missing`)."""
    found = find_tool(name)
    if found is None:
        how = INSTALL.get(name)
        missing(f"{name} is not on the PATH" + (f" ({how})" if how else ""))
    return found
