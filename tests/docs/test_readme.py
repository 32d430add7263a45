"""README (the front door) and the manual's pages stay in step with the code they document."""

from __future__ import annotations

import re
from pathlib import Path

from arbiter.app.sim_console import HELP
from arbiter.rules.keycode import chart_markdown

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PIECES = (ROOT / "docs" / "play" / "pieces.md").read_text(encoding="utf-8")
SIMULATOR = (ROOT / "docs" / "play" / "simulator.md").read_text(encoding="utf-8")
#: The front door stays short: what it is, the two commands, a picture, links into the site.
README_LIMIT = 12 * 1024


def test_readme_is_at_most_12_kb() -> None:
    size = len(README.encode("utf-8"))
    assert size <= README_LIMIT, f"README.md is {size} bytes, the limit {README_LIMIT}"


def test_pieces_page_key_table_is_generated_one() -> None:
    block = re.search(r"<!-- keycodes:begin -->\n(.*?)<!-- keycodes:end -->", PIECES, re.S)
    assert block is not None, "docs/play/pieces.md lost its key code table"
    assert block.group(1).strip() == chart_markdown().strip()


def test_readme_states_the_two_commands_ci_runs() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "bash setup.sh && .venv/bin/gg-arbiter run" in README
    test_command = (
        "bash setup.sh --dev && .venv/bin/ruff check . && .venv/bin/mypy"
        " && .venv/bin/pytest -q -n 2"
    )
    assert test_command in README
    for step in test_command.split(" && "):
        assert step in ci


def test_readme_shows_a_screenshot_that_exists() -> None:
    pictures = re.findall(r'<img src="([^"]+)"|!\[[^\]]*\]\(([^)]+)\)', README)
    paths = [a or b for a, b in pictures]
    assert paths, "README shows no picture"
    missing = [p for p in paths if not (ROOT / p).is_file()]
    assert not missing, f"README shows missing pictures: {missing}"


def test_readme_links_into_the_site_resolve_to_pages_in_its_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:\n", 1)[1]
    links = re.findall(r"\]\((docs/[^)#\s]+)", README)
    assert len(links) >= 5, "README links to no pages of the manual"
    for link in links:
        assert (ROOT / link).exists(), f"README links to a missing {link}"
        if link.endswith(".md"):
            page = link.removeprefix("docs/")
            assert re.search(rf"^\s*- (?:.*: )?{re.escape(page)}\s*$", nav, re.M), (
                f"README links to {link}, which the site's nav leaves out"
            )


def test_readme_says_how_to_serve_the_site() -> None:
    assert ".venv/bin/mkdocs serve" in README


def test_simulator_page_lists_every_simulator_command() -> None:
    for verb in ("attacker", "defender", "clear", "new", "end", "status", "quit"):
        assert verb in HELP
        assert f"`{verb}" in SIMULATOR
