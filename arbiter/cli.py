"""The ``gg-arbiter`` command line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from arbiter import __version__
from arbiter.game import Game
from arbiter.journal import CorruptDataError, StoreError, list_game_ids, read_game
from arbiter.paths import default_data_dir
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


def _data_dir(args: argparse.Namespace) -> Path:
    return Path(args.data) if args.data else default_data_dir()


def _describe(game: Game) -> str:
    view = game.public_view()
    if game.ending is None:
        status = "in progress"
    else:
        winner = game.ending.winner
        status = game.ending.kind.value.replace("_", " ")
        status += f", {winner.title} won" if winner else ""
    return (
        f"game {game.id}: {status}; {view['challenge_count']} challenge(s); "
        f"eliminated W {view['eliminated']['W']}, B {view['eliminated']['B']}"
    )


def _cmd_record(args: argparse.Namespace) -> int:
    data = _data_dir(args)
    ids = list_game_ids(data)
    if not ids:
        raise CliError(f"no games recorded in {data}")
    game_id = args.game_id if args.game_id is not None else ids[-1]
    try:
        game = read_game(data, game_id)
    except CorruptDataError as exc:
        intact = len(exc.valid.challenges) if exc.valid else 0
        raise CliError(f"{exc} ({intact} challenge(s) before it are intact)") from None
    except StoreError as exc:
        raise CliError(str(exc)) from None
    if args.json:
        print(json.dumps(game.full_record() if game.over else game.public_view(), indent=2))
        return 0
    print(_describe(game))
    if not game.over:
        for v in game.public_view()["verdicts"]:
            print(f"  {v['number']:3d}. {v['attacker_side']} attacks: {v['result']}")
        print("  (ranks stay secret until the game is over)")
        return 0
    for c in game.challenges:
        survivor = c.verdict.survivor.public_word
        flag = "  Flag fell" if c.verdict.flag_fell else ""
        print(f"  {c.number:3d}. {c.attacker} attacks {c.defender}: {survivor}{flag}")
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

    record = sub.add_parser(
        "record", help="print or export a game (ranks only once it is over)"
    )
    record.add_argument("game_id", metavar="GAME_ID", nargs="?", type=int,
                        help="which game (default: the latest)")
    record.add_argument("--data", metavar="DIR", help="data directory")
    record.add_argument("--json", action="store_true", help="print the record as JSON")
    record.set_defaults(func=_cmd_record)
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
