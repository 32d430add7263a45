"""The ``gg-arbiter`` command line: the commands' modules assembled, and the dispatch.

Each command (or group) lives in :mod:`arbiter.app.commands` with its subparser
(``register``) beside its handler; a long-running one's handler is a
:class:`~arbiter.app.commands.common.Serving`, given the stop requests
(:mod:`arbiter.app.stopping`) before its set-up begins, so a stop signal at any
moment ends it without a lock taken in a signal handler.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from arbiter import __version__
from arbiter.app.commands import (
    broker_config,
    end,
    enroll,
    hub,
    join,
    judge,
    monitor,
    record,
    run,
    selftest,
    set_pin,
    tune,
    venue,
)
from arbiter.app.commands.common import Parser, Serving, describe
from arbiter.app.stopping import StopRequests
from arbiter.errors import ArbiterError
from arbiter.threads import stop_all

#: The commands, in the order ``gg-arbiter --help`` lists them.
COMMANDS = (judge, record, run, tune, selftest, enroll, monitor, end, broker_config, join,
            venue, set_pin)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="gg-arbiter", description="Salpakan Arbiter: a Game of the Generals arbiter"
    )
    parser.add_argument("--version", action="version", version=f"gg-arbiter {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for command in COMMANDS:
        command.register(sub)
    hub.register(sub, Parser)
    describe(parser)
    return parser


def dispatch(args: argparse.Namespace) -> int:
    """Run the command ``args`` name; a long-running one with the stop requests installed,
    and every background thread it left stopped once it returns."""
    if not isinstance(args.func, Serving):
        result: int = args.func(args)
        return result
    try:
        with StopRequests() as requests:
            return args.func.handler(args, requests)
    finally:
        stop_all()


def main(argv: Sequence[str] | None = None) -> int:
    import logging

    level = os.environ.get("GG_ARBITER_LOG", "INFO").upper()
    logging.basicConfig(
        level=level if level in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL") else "INFO",
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        return dispatch(args)
    except ArbiterError as exc:  # CliError, and any arbiter error a command let through
        print(str(exc), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
