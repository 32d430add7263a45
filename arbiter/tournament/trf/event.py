"""What a TRF file holds, its limits, and which rounds it holds."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arbiter.tournament.model import Bye, Colour, Game, Player

NAME_WIDTH = 33

#: Start ranks have four digits (columns 5-8).
MAX_PLAYERS = 9999
#: The most rounds a TRF file may announce (``XXR``): as many as the hub's tables can be
#: assigned (arbiter.wire.MAX_ROUND; a test holds the two equal), far more than any event.
MAX_ROUNDS = 1000
#: The largest TRF file read: a 1,000-player event of 30 rounds is about 0.4 MB, the
#: format's 9,999 players of 30 rounds 3.9 MB. A bigger file is refused before it is read,
#: so memory stays bounded whatever is given.
MAX_FILE_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class TrfEvent:
    """What a TRF file holds: players in start-rank order, the games, the number of rounds.

    ``games`` may end with the byes given for the round after the last one paired.
    ``announced``: whether the file said its number of rounds (``XXR``); when it did not,
    ``total_rounds`` is the rounds it holds (at least 1), which is no event's length.
    """

    name: str
    players: tuple[Player, ...]
    games: tuple[Game, ...]
    total_rounds: int
    initial: Colour = Colour.WHITE
    announced: bool = True


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
