"""tests/support/tools.py: the one rule for a missing tool (fail under CI, else skip),
and that no test decides it by itself."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.tools import require_tool

TESTS = Path(__file__).resolve().parent
ABSENT = "gg-no-such-tool"


def test_a_missing_tool_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=f"CI must run this test, but {ABSENT}"):
        require_tool(ABSENT)


@pytest.mark.parametrize("ci", [None, "", "false", "0"])
def test_a_missing_tool_skips_elsewhere(monkeypatch: pytest.MonkeyPatch, ci: str | None) -> None:
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.skip.Exception, match=ABSENT):
        require_tool(ABSENT)


def test_under_ci_a_tool_off_the_path_is_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """CI's PATH is the job's own: a tool in /usr/sbin but not on it fails (elsewhere the
    sbin directories are searched too, as Debian keeps mosquitto there)."""
    tool = tmp_path / "bin" / "gg-fake-tool"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\n", encoding="utf-8")
    tool.chmod(0o755)
    monkeypatch.setenv("CI", "true")
    monkeypatch.setenv("PATH", str(tool.parent))
    assert require_tool("gg-fake-tool") == str(tool)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(pytest.fail.Exception):
        require_tool("gg-fake-tool")


def test_no_test_skips_for_a_tool_by_itself() -> None:
    """Every skip for a missing tool goes through tests/support/tools.py."""
    offenders = []
    for path in sorted(TESTS.rglob("*.py")):
        if (path.name == "tools.py" and path.parent.name == "support") or path == Path(__file__):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if "pytest.skip(" in line or re.search(r"shutil\.which\((?!\"gg-arbiter\")", line):
                offenders.append(f"{path.relative_to(TESTS)}:{number}: {line.strip()}")
    assert offenders == []
