"""The check of the command lines the docs name (tests.support.cli_docs): it follows
subcommands and their options, finds what a reference page leaves out, and every page
of the manual passes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli_docs import missing_commands, unknown_commands

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGE = DOCS / "appliance" / "command-line.md"


def test_an_option_is_checked_against_the_subcommand_it_is_named_for() -> None:
    assert unknown_commands("`gg-arbiter hub --event E --broker URL gaps --resend`") == []
    assert unknown_commands("`gg-arbiter hub --event E pair --system swiss`") == []
    # argparse takes the hub's options before its subcommand only.
    assert unknown_commands("`gg-arbiter hub gaps --resend --broker URL`") == [
        "gg-arbiter hub gaps --broker"]
    assert unknown_commands("`gg-arbiter hub players add NAME --rating 5 --who x`") == [
        "gg-arbiter hub players add --who"]
    assert unknown_commands("`gg-arbiter enroll --piece W:PVT#3 --sim`") == []
    assert unknown_commands("```sh\ngg-arbiter hub players list  # --nothing\n```") == []


def test_a_reference_page_that_leaves_a_subcommand_or_option_out_is_caught() -> None:
    page = PAGE.read_text()
    assert missing_commands(page) == []
    rows = page.splitlines()
    without_rounds = "\n".join(r for r in rows if "hub ... rounds" not in r)
    assert missing_commands(without_rounds) == [
        "gg-arbiter hub rounds", "gg-arbiter hub rounds --who"]
    # An option named for another command does not count for this one.
    without_quiet = page.replace("silent [--quiet MINUTES]", "silent")
    assert missing_commands(without_quiet) == ["gg-arbiter hub silent --quiet"]


@pytest.mark.parametrize("page", sorted(DOCS.rglob("*.md")), ids=lambda p: p.name)
def test_every_page_of_the_manual_names_only_real_commands(page: Path) -> None:
    assert unknown_commands(page.read_text()) == []
