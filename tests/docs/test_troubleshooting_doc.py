"""docs/build/troubleshooting.md: every command it names exists, every row has a check."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from arbiter.app.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "build" / "troubleshooting.md"
#: A gg-arbiter command inside a code span; not the account in `sudo -u gg-arbiter`,
#: the unit in `systemctl stop gg-arbiter` (no command follows) or a path.
COMMAND = re.compile(r"(?<![-\w/])(?<!-u )gg-arbiter ([a-z][a-z-]*)([^`]*)")
OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z-]*)")


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def named_commands(text: str) -> list[tuple[str, list[str]]]:
    """Each ``gg-arbiter COMMAND --option ...`` in the code spans of ``text``."""
    found = []
    for span in re.findall(r"`([^`]+)`", text):
        for match in COMMAND.finditer(span):
            found.append((match.group(1), OPTION.findall(match.group(2))))
    return found


def unknown_commands(text: str) -> list[str]:
    commands = _subcommands()
    wrong = []
    for name, options in named_commands(text):
        parser = commands.get(name)
        if parser is None:
            wrong.append(f"gg-arbiter {name}")
            continue
        known = {o for action in parser._actions for o in action.option_strings}
        wrong += [f"gg-arbiter {name} {o}" for o in options if o not in known]
    return wrong


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
