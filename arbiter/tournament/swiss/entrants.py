"""The players as the pairing sees them: each one's past rounds, score, colour
difference and preference (A6), floats (A4), and the colour a pair's player gets (E1-E5)."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from arbiter.tournament.model import Bye, Colour, Game, Player

#: The higher-ranked player's colour in round 1 when his pairing number is odd (``XXC white1``),
#: unless the games played show another (model.initial_colour).
INITIAL_COLOUR = Colour.WHITE


class Float(enum.Enum):
    """How a player's pairing in a round compared with his score (A4)."""

    DOWN = "D"
    UP = "U"
    NONE = " "


@dataclass(frozen=True)
class PastRound:
    """One past round of one player: an opponent with a colour, the bye, or nothing."""

    opponent: int | None  # pairing index; None: no game played
    colour: Colour | None
    points2: int  # points in half-points
    bye: bool


@dataclass
class Entrant:
    """One player's state before the round: what the criteria read."""

    index: int  # seed order: pairing number - 1
    name: str
    rounds: list[PastRound]
    score2: int  # half-points
    played: int
    imbalance: int  # |whites - blacks|
    preference: Colour | None
    repeated: Colour | None  # the colour had twice running, when so
    strong: bool
    bye_eligible: bool

    @property
    def absolute_imbalance(self) -> bool:
        return self.imbalance > 1

    @property
    def absolute(self) -> bool:
        return self.absolute_imbalance or self.repeated is not None

    def score_before(self, rounds_back: int) -> int:
        """Score (half-points) leaving out the last ``rounds_back`` rounds."""
        return sum(r.points2 for r in self.rounds[: len(self.rounds) - rounds_back])

    def float_in(self, rounds_back: int, everyone: Sequence[Entrant]) -> Float:
        """The float of the round ``rounds_back`` before this one (1: the last)."""
        if rounds_back > len(self.rounds):
            return Float.NONE
        past = self.rounds[len(self.rounds) - rounds_back]
        if past.opponent is None:
            return Float.DOWN if past.points2 > 0 else Float.NONE
        mine = self.score_before(rounds_back)
        theirs = everyone[past.opponent].score_before(rounds_back)
        if mine > theirs:
            return Float.DOWN
        if mine < theirs:
            return Float.UP
        return Float.NONE


def read_entrants(players: Sequence[Player], games: Sequence[Game], played: int) -> list[Entrant]:
    """Each player's state before round ``played + 1``, in seed order."""
    table = _past_rounds(players, games, played)
    return [_entrant(i, p.name, table[i]) for i, p in enumerate(players)]


def _past_rounds(
    players: Sequence[Player], games: Sequence[Game], played: int
) -> list[list[PastRound]]:
    """Each player's rounds 1 to ``played`` as the pairing counts them."""
    index = {p.name: i for i, p in enumerate(players)}
    table: list[list[PastRound]] = [
        [PastRound(None, None, 0, False) for _ in range(played)] for _ in players
    ]
    for game in games:
        pg = game.pairing
        if not 1 <= pg.round <= played:
            continue
        w = index[pg.white]
        if pg.black is None:
            points2 = int(game.bye.points * 2)
            table[w][pg.round - 1] = PastRound(None, None, points2, game.bye is Bye.PAIRING)
            continue
        b = index[pg.black]
        if game.forfeit:
            # Not a game: no opponent met, no colour; the points count (a float when won).
            for me, name in ((w, pg.white), (b, pg.black)):
                points2 = int(2 * (game.points(name) or 0))
                table[me][pg.round - 1] = PastRound(None, None, points2, False)
            continue
        sides = ((w, b, Colour.WHITE, pg.white), (b, w, Colour.BLACK, pg.black))
        for me, opp, colour, name in sides:
            points = game.points(name)
            table[me][pg.round - 1] = PastRound(
                opp, colour, 0 if points is None else int(points * 2), False
            )
    return table


def _entrant(index: int, name: str, rounds: list[PastRound]) -> Entrant:
    """A player's state from his past rounds: the colours (A6) and whether he may have the bye."""
    whites = blacks = run = 0
    last: Colour | None = None
    for r in rounds:
        if r.colour is None:
            continue
        whites += r.colour is Colour.WHITE
        blacks += r.colour is Colour.BLACK
        run = run + 1 if r.colour is last else 1
        last = r.colour
    lower = Colour.BLACK if whites > blacks else Colour.WHITE
    imbalance = abs(whites - blacks)
    preference: Colour | None
    if imbalance > 1:
        preference = lower
    elif run > 1:
        assert last is not None
        preference = last.other
    elif imbalance > 0:
        preference = lower
    elif run:
        assert last is not None
        preference = last.other
    else:
        preference = None
    repeated = last if run > 1 else None
    absolute = imbalance > 1 or repeated is not None
    # A player who had a point without playing (the bye, a forfeit win) cannot get the bye.
    eligible = not any(r.bye or (r.opponent is None and r.points2 >= 2) for r in rounds)
    return Entrant(
        index=index,
        name=name,
        rounds=rounds,
        score2=sum(r.points2 for r in rounds),
        played=whites + blacks,
        imbalance=imbalance,
        preference=preference,
        repeated=repeated,
        strong=not absolute and imbalance > 0,
        bye_eligible=eligible,
    )


def _neutral_colour(me: Entrant, other: Entrant) -> Colour | None:
    """My colour by E1-E3, or None when it comes down to rank (E4) or to nothing (E5)."""
    mp, op = me.preference, other.preference
    if mp is None or op is None or mp is not op:
        if mp is not None:
            return mp
        if op is not None:
            return op.other
        return None
    if me.absolute and (me.imbalance > other.imbalance or not other.absolute):
        return mp
    if other.absolute and (other.imbalance > me.imbalance or not me.absolute):
        return op.other
    if me.strong and not other.strong:
        return mp
    if other.strong and not me.strong:
        return op.other
    # E3: alternate from the latest round in which the two had different colours.
    mine = [r.colour for r in me.rounds if r.colour is not None]
    theirs = [r.colour for r in other.rounds if r.colour is not None]
    i, j = len(mine) - 1, len(theirs) - 1
    while i >= 0 and j >= 0 and mine[i] is theirs[j]:
        i -= 1
        j -= 1
    if i >= 0 and j >= 0:
        return theirs[j]
    return None


def colour_against(
    me: Entrant, other: Entrant, ranks_above: bool, initial: Colour = INITIAL_COLOUR,
    number: dict[int, int] | None = None,
) -> Colour:
    """My colour against ``other``; ``ranks_above``: I rank higher (score, then pairing number)."""
    neutral = _neutral_colour(me, other)
    if neutral is not None:
        return neutral
    if me.preference is None:
        # E5: the higher-ranked player has the initial colour when his pairing number is odd.
        higher = me if ranks_above else other
        place = higher.index if number is None else number[higher.index]
        higher_gets = initial if place % 2 == 0 else initial.other
        return higher_gets if ranks_above else higher_gets.other
    # E4: the higher-ranked player gets his preference.
    assert other.preference is not None
    return me.preference if ranks_above else other.preference.other
