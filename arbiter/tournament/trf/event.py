"""What a TRF file holds, its limits, and which rounds it holds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arbiter.tournament.model import Bye, Colour, Game, Player

NAME_WIDTH = 33

#: Start ranks have four digits (columns 5-8).
MAX_PLAYERS = 9999


@dataclass(frozen=True)
class TrfEvent:
    """What a TRF file holds: players in start-rank order, the games, the number of rounds.

    ``games`` may end with the byes given for the round after the last one paired.
    """

    name: str
    players: tuple[Player, ...]
    games: tuple[Game, ...]
    total_rounds: int
    initial: Colour = Colour.WHITE


def complete_rounds(games: Sequence[Game]) -> int:
    """The number of leading rounds that were paired (a game or the pairing-allocated
    bye) and in which every game is settled."""
    by_round: dict[int, list[Game]] = {}
    for g in games:
        by_round.setdefault(g.pairing.round, []).append(g)
    done = 0
    while (
        done + 1 in by_round
        and all(g.complete for g in by_round[done + 1])
        and any(paired(g) for g in by_round[done + 1])
    ):
        done += 1
    return done


def paired(g: Game) -> bool:
    return not g.pairing.is_bye or g.bye is Bye.PAIRING
