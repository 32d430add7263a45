"""``gg-arbiter judge ATTACKER DEFENDER``: decide one challenge."""

from __future__ import annotations

import argparse
import json
from typing import Any

from arbiter.app.errors import CliError
from arbiter.rules.errors import PieceError
from arbiter.rules.pieces import Piece, parse_rank
from arbiter.rules.ranks import Rank, Side
from arbiter.rules.verdict import resolve


def _judged_rank(text: str) -> tuple[Side | None, Rank]:
    """A rank (``5*g``, ``spy``) or a piece (``W:5*G``, as the README writes them)."""
    if ":" in text:
        piece = Piece.parse(text)
        return piece.side, piece.rank
    return None, parse_rank(text)


def _cmd_judge(args: argparse.Namespace) -> int:
    try:
        attacker_side, attacker = _judged_rank(args.attacker)
        defender_side, defender = _judged_rank(args.defender)
    except PieceError as exc:
        raise CliError(str(exc)) from None
    if attacker_side is not None and attacker_side is defender_side:
        # The device refuses such a pair (a piece never challenges its own side).
        raise CliError(
            f"refused: {args.attacker} and {args.defender} are both {attacker_side.title}; "
            "a challenge is between a White and a Black piece"
        )
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


def register(sub: Any) -> None:
    """Add ``judge`` to the ``gg-arbiter`` subparsers ``sub``."""
    judge = sub.add_parser("judge", help="decide one challenge: gg-arbiter judge SPY 5*G")
    judge.add_argument("attacker", metavar="ATTACKER",
                       help="rank (code or name) or piece (W:SPY) of the challenger")
    judge.add_argument("defender", metavar="DEFENDER",
                       help="rank (code or name) or piece (B:5*G) of the challenged")
    judge.add_argument("--json", action="store_true", help="print one JSON object")
    judge.set_defaults(func=_cmd_judge)
