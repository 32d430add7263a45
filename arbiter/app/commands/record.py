"""``gg-arbiter record [GAME_ID]``: print or export a game (ranks only once it is over, and
for an abandoned game only once the next game has begun)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from arbiter.app.commands.common import (
    data_dir,
)
from arbiter.app.errors import CliError
from arbiter.rules.game import Game
from arbiter.storage.journal import CorruptDataError, StoreError, list_game_ids, read_game


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
    data = data_dir(args)
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
        print(json.dumps(game.public_view() if game.sealed else game.full_record(), indent=2))
        return 0
    print(_describe(game))
    if game.sealed:
        for v in game.public_view()["verdicts"]:
            print(f"  {v['number']:3d}. {v['attacker_side']} attacks: {v['result']}")
        print("  (ranks stay secret until the game is over)" if not game.over else
              "  (abandoned: ranks stay secret until the next game has begun)")
        return 0
    for c in game.challenges:
        survivor = c.verdict.survivor.public_word
        flag = "  Flag fell" if c.verdict.flag_fell else ""
        print(f"  {c.number:3d}. {c.attacker} attacks {c.defender}: {survivor}{flag}")
    return 0


def register(sub: Any) -> None:
    """Add ``record`` to the ``gg-arbiter`` subparsers ``sub``."""
    record = sub.add_parser(
        "record", help="print or export a game (ranks only once it is over)"
    )
    record.add_argument("game_id", metavar="GAME_ID", nargs="?", type=int,
                        help="which game (default: the latest)")
    record.add_argument("--data", metavar="DIR", help="data directory")
    record.add_argument("--json", action="store_true", help="print the record as JSON")
    record.set_defaults(func=_cmd_record)
