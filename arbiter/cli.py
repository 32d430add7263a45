"""The ``gg-arbiter`` command line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from arbiter import __version__
from arbiter.pieces import PieceError, parse_rank
from arbiter.verdict import resolve


class CliError(Exception):
    """A user error: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise CliError(f"{self.prog}: {message}")


def _cmd_judge(args: argparse.Namespace) -> int:
    try:
        attacker = parse_rank(args.attacker)
        defender = parse_rank(args.defender)
    except PieceError as exc:
        raise CliError(str(exc)) from None
    verdict = resolve(attacker, defender)
    if args.json:
        print(
            json.dumps(
                {
                    "attacker": attacker.code,
                    "defender": defender.code,
                    "survivor": verdict.survivor.value,
                    "flag_fell": verdict.flag_fell,
                    "fallen_flag": verdict.fallen_flag.value if verdict.fallen_flag else None,
                }
            )
        )
    else:
        words = {
            "attacker": f"attacker ({attacker.full_name}) survives",
            "defender": f"defender ({defender.full_name}) survives",
            "none": "split: both are eliminated",
        }
        line = words[verdict.survivor.value]
        if verdict.flag_fell:
            line += "; a Flag fell: game over"
        print(line)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="gg-arbiter", description="Salpakan Arbiter: a Game of the Generals arbiter"
    )
    parser.add_argument("--version", action="version", version=f"gg-arbiter {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    judge = sub.add_parser("judge", help="decide one challenge: gg-arbiter judge SPY 5*G")
    judge.add_argument("attacker", metavar="ATTACKER", help="rank code or name of the challenger")
    judge.add_argument("defender", metavar="DEFENDER", help="rank code or name of the challenged")
    judge.add_argument("--json", action="store_true", help="print one JSON object")
    judge.set_defaults(func=_cmd_judge)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        result: int = args.func(args)
        return result
    except CliError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
