"""The commands a document names: each ``gg-arbiter COMMAND --option`` in its code
spans, checked against the real argument parser (the docs tests share it)."""

from __future__ import annotations

import argparse
import re

from arbiter.app.cli import build_parser

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
