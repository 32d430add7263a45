"""README stays in step with the code it documents."""

from __future__ import annotations

import re
from pathlib import Path

from arbiter.app.sim_console import HELP
from arbiter.rules.keycode import chart_markdown

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def test_readme_key_table_is_generated_one() -> None:
    block = re.search(r"<!-- keycodes:begin -->\n(.*?)<!-- keycodes:end -->", README, re.S)
    assert block is not None
    assert block.group(1).strip() == chart_markdown().strip()


def test_readme_states_the_two_commands_ci_runs() -> None:
    ci = (Path(__file__).resolve().parents[2] / ".ci" / "run").read_text()
    assert "bash setup.sh && .venv/bin/gg-arbiter run" in README
    test_command = (
        "bash setup.sh --dev && .venv/bin/ruff check . && .venv/bin/mypy && .venv/bin/pytest -q"
    )
    assert test_command in README
    for step in test_command.split(" && "):
        assert step in ci


def test_readme_lists_every_simulator_command() -> None:
    for verb in ("attacker", "defender", "clear", "new", "end", "status", "quit"):
        assert verb in HELP
        assert f"`{verb}" in README
