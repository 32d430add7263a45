"""docs/build/troubleshooting.md: every command it names exists, every row has a check."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.cli_docs import named_commands, unknown_commands

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "build" / "troubleshooting.md"
def test_troubleshooting_names_only_commands_and_options_that_exist() -> None:
    text = DOC.read_text(encoding="utf-8")
    names = {name for name, _ in named_commands(text)}
    assert {"monitor", "selftest", "enroll"} <= names
    assert unknown_commands(text) == []


def test_troubleshooting_check_catches_a_misnamed_command() -> None:
    assert unknown_commands("`gg-arbiter selftest --watch`") == ["gg-arbiter selftest --watch"]
    assert unknown_commands("`gg-arbiter doctor`") == ["gg-arbiter doctor"]
    assert unknown_commands("`sudo -u gg-arbiter gg-arbiter monitor --sim`") == []
    assert unknown_commands("`sudo systemctl stop gg-arbiter`") == []


def test_troubleshooting_every_row_has_symptom_cause_and_a_check() -> None:
    rows = [
        line for line in DOC.read_text(encoding="utf-8").splitlines()
        if line.startswith("| ") and not line.startswith("| Symptom")
    ]
    assert len(rows) >= 15
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        assert len(cells) == 3 and all(cells), row
        assert "`" in cells[2], f"the check names no command: {row}"


def test_troubleshooting_is_linked_from_the_build_docs() -> None:
    assert "(troubleshooting.md)" in (ROOT / "docs" / "build" / "index.md").read_text()
    assert "(troubleshooting.md)" in (ROOT / "docs" / "build" / "guide.md").read_text()
    # The bench page names the guide: as a link beside it in docs/, or as the
    # repository path of a file outside docs/ (MkDocs cannot link there).
    bench = ROOT / "docs" / "appliance" / "bench.md"
    named = re.findall(r"\]\(([^)#]*troubleshooting\.md)|`([\w/.-]*troubleshooting\.md)`",
                       bench.read_text())
    assert named, "docs/appliance/bench.md does not name the troubleshooting guide"
    for link, path in named:
        target = (bench.parent / link) if link else (ROOT / path)
        assert target.resolve() == DOC.resolve(), f"{link or path} is not {DOC}"
