"""Every ``--help`` describes its command: each command and subcommand says what it does
(not only its usage), and each of its arguments what it takes."""

from __future__ import annotations

import argparse

import pytest

from arbiter.app.cli import main
from tests.support.cli_docs import commands


def test_every_command_and_subcommand_has_a_description_and_every_argument_a_help() -> None:
    undescribed, unexplained = [], []
    for path, parser in commands().items():
        if not parser.description:
            undescribed.append(" ".join(path))
        unexplained += [
            f"{' '.join(path)} {action.dest}" for action in parser._actions
            if action.help is None and not isinstance(
                action, (argparse._HelpAction, argparse._SubParsersAction))
        ]
    assert undescribed == [] and unexplained == []


def test_hub_players_help_says_what_it_does(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["hub", "--event", "e", "players", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "add, import, withdraw or list the event's players" in out
    assert "register one player" in out and "withdraw" in out
    with pytest.raises(SystemExit):
        main(["hub", "--event", "e", "rounds", "--help"])
    out = capsys.readouterr().out
    assert "show, or set, the event's length" in out and "from the rounds paired to 1000" in out
