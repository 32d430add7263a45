"""``gg-arbiter end``: declare an ending the device cannot see (flag home,
resignation, draw), here or through the running arbiter."""

from __future__ import annotations

import argparse
from typing import Any

from arbiter.app.commands.common import (
    add_config_options,
    add_service_options,
    command_config,
)
from arbiter.app.errors import CliError
from arbiter.app.service_client import end_through_service
from arbiter.rules.errors import EndingError, PieceError
from arbiter.rules.game import EndingKind
from arbiter.rules.pieces import parse_side
from arbiter.storage.journal import GameStore, StoreError, StoreLockedError

_REASONS = {"flag_home": EndingKind.FLAG_HOME, "resignation": EndingKind.RESIGNATION,
            "draw": EndingKind.DRAW}


def _cmd_end(args: argparse.Namespace) -> int:
    config = command_config(args)
    kind = _REASONS[args.reason]
    winner = None
    if args.winner:
        try:
            winner = parse_side(args.winner)
        except PieceError as exc:
            raise CliError(str(exc)) from None
    if kind.has_winner and winner is None:
        raise CliError(f"--reason {args.reason} needs --winner W or B")
    try:
        store = GameStore(config.data_dir)
    except StoreLockedError:
        return end_through_service(config, args, winner)
    except StoreError as exc:
        raise CliError(str(exc)) from None
    with store:
        try:
            store.declare_end(kind, winner)
        except EndingError as exc:
            raise CliError(str(exc)) from None
        print(f"game {store.current.id} ended: {args.reason}"
              + (f", {winner.title} wins" if winner else ""))
    return 0


def register(sub: Any) -> None:
    """Add ``end`` to the ``gg-arbiter`` subparsers ``sub``."""
    end = sub.add_parser("end", help="declare an ending the device cannot see")
    add_config_options(end)
    end.add_argument("--reason", required=True, choices=sorted(_REASONS),
                     help="how the game ended")
    end.add_argument("--winner", metavar="SIDE", help="W or B (not for a draw)")
    add_service_options(end)
    end.set_defaults(func=_cmd_end)
