"""The commands a document names: each ``gg-arbiter COMMAND [SUBCOMMAND ...] --option``
in its code spans, checked against the real argument parser (the docs tests share it),
both ways: nothing named that the parser lacks (:func:`unknown_commands`), and, for the
reference page, nothing the parser has left unnamed (:func:`missing_commands`)."""

from __future__ import annotations

import argparse
import re

from arbiter.app.cli import build_parser

#: A gg-arbiter command inside a code span; not the account in `sudo -u gg-arbiter`,
#: the unit in `systemctl stop gg-arbiter` (no command follows) or a path.
COMMAND = re.compile(r"(?<![-\w/])(?<!-u )gg-arbiter ([a-z][a-z-]*)([^`]*)")
OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z-]*)")
#: What a command line's tokens are cut at, beside spaces: optional parts, alternatives,
#: an option's value given with "=".
_CUT = re.compile(r"[\s\[\]()=|\\]+")

#: A command as the words that call it: ("hub", "players", "add").
Path = tuple[str, ...]


def _children(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The subcommands of ``parser`` by name (none for a command without any)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    return _children(build_parser())


def commands() -> dict[Path, argparse.ArgumentParser]:
    """Every command and subcommand of ``gg-arbiter``, by its path, down to the last."""
    found: dict[Path, argparse.ArgumentParser] = {}

    def walk(path: Path, parser: argparse.ArgumentParser) -> None:
        for name, child in _children(parser).items():
            found[(*path, name)] = child
            walk((*path, name), child)

    walk((), build_parser())
    return found


def _options(parser: argparse.ArgumentParser) -> dict[str, bool]:
    """Each option of ``parser`` (help and hidden ones left out): whether it takes a value."""
    return {
        o: action.nargs != 0
        for action in parser._actions
        if action.help != argparse.SUPPRESS and not isinstance(action, argparse._HelpAction)
        for o in action.option_strings if o.startswith("--")
    }


def code(text: str) -> list[str]:
    """The code of a Markdown text: each line of its fenced blocks, then its inline code
    spans (found once the fences are out, so a fence's backticks pair with no span's)."""
    fenced = re.compile(r"^```[^\n]*\n(.*?)^```", re.M | re.S)
    lines = [line for block in fenced.findall(text) for line in block.splitlines()]
    return lines + re.findall(r"`([^`]+)`", fenced.sub("", text))


def named(text: str) -> list[tuple[Path, list[str]]]:
    """Each ``gg-arbiter`` command line in the code spans of ``text``: the command's path
    (down through the subcommands it names) and every option named on the way, each
    with the path of the (sub)command it was named for."""
    found: list[tuple[Path, list[str]]] = []
    for span in code(text):
        for match in COMMAND.finditer(span):
            path: Path = (match.group(1),)
            options: list[str] = []
            parser = _subcommands().get(match.group(1))
            skip = False
            # One command line: it ends at a line's end, a shell comment or a ";".
            line = re.split(r"\n|\s#|;", match.group(2), maxsplit=1)[0]
            for token in [t for t in _CUT.split(line) if t]:
                if skip:  # the value of the option before
                    skip = False
                    continue
                if parser is None:
                    break
                if OPTION.fullmatch(token):
                    options.append(" ".join(path) + " " + token)
                    skip = _options(parser).get(token, False)
                elif token in _children(parser):
                    path = (*path, token)
                    parser = _children(parser)[token]
            found.append((path, options))
    return found


def named_commands(text: str) -> list[tuple[str, list[str]]]:
    """Each ``gg-arbiter COMMAND --option ...`` in the code spans of ``text``."""
    found = []
    for span in code(text):
        for match in COMMAND.finditer(span):
            found.append((match.group(1), OPTION.findall(match.group(2))))
    return found


def unknown_commands(text: str) -> list[str]:
    """What ``text`` names that the parser lacks: a command, or an option of the
    (sub)command it is named for (``gg-arbiter hub --event E pair --system``: --event of
    hub, --system of hub pair)."""
    every = commands()
    wrong: list[str] = []
    for path, options in named(text):
        if path not in every:
            wrong.append(f"gg-arbiter {' '.join(path)}")
            continue
        for named_option in options:
            *where, option = named_option.split(" ")
            if option != "--help" and option not in _options(every[tuple(where)]):
                wrong.append(f"gg-arbiter {named_option}")
    return wrong


def missing_commands(text: str) -> list[str]:
    """What the parser has that ``text`` never names: each command and subcommand, and
    each of their options (a reference page must name them all)."""
    every = commands()
    lines = named(text)
    # A subcommand named names its parents too: "hub players add" names "hub players".
    paths = {path[:n] for path, _ in lines for n in range(1, len(path) + 1)}
    options = {o for _, named_options in lines for o in named_options}
    missing: list[str] = []
    for path, parser in every.items():
        words = " ".join(path)
        if path not in paths:
            missing.append(f"gg-arbiter {words}")
        missing += [f"gg-arbiter {words} {o}" for o in _options(parser)
                    if f"{words} {o}" not in options]
    return missing
