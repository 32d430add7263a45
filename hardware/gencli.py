"""The command line every generator of hardware/ shares: write, or ``--check`` for staleness.

A generator (``steps.py``, ``models.py``, ``quickref.py``, ``generate.py``) hands
:func:`run` its two actions, each returning an :class:`Outcome`: the problems
(stale or warning lines, printed one a line; any makes the exit status 1) and
the line to print when there are none. Its own errors (openscad or Chromium
missing) exit 2 with the generator's name in front. A generator with options of
its own adds them through ``options`` and reads them from the namespace both
actions get.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

#: The help of ``--check`` unless a generator says otherwise.
CHECK_HELP = "write nothing; exit 1 if a generated file is stale or warns"


@dataclass(frozen=True)
class Outcome:
    """What one run found: ``problems`` (none: ``summary`` is printed instead)."""

    problems: tuple[str, ...]
    summary: str


Action = Callable[[argparse.Namespace], Outcome]


def run(argv: Sequence[str] | None, *, doc: str, tool: str, write: Action, check: Action,
        errors: tuple[type[Exception], ...] = (),
        options: Callable[[argparse.ArgumentParser], None] | None = None,
        check_help: str = CHECK_HELP) -> int:
    """Parse ``argv`` (the first line of ``doc`` is the description), run ``check`` or
    ``write``; exit status 0 (nothing to report), 1 (problems) or 2 (one of ``errors``)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--check", action="store_true", help=check_help)
    if options is not None:
        options(parser)
    args = parser.parse_args(argv)
    try:
        outcome = check(args) if args.check else write(args)
    except errors as exc:
        print(f"{tool}: {exc}", file=sys.stderr)
        return 2
    for line in outcome.problems:
        print(line)
    if not outcome.problems:
        print(outcome.summary)
    return 1 if outcome.problems else 0
