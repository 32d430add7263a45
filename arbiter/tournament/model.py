"""Players, pairings, results and the scores they give."""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from arbiter.tournament.errors import DuplicatePlayerError


class Colour(enum.Enum):
    """The side a player plays: the table's W and B."""

    WHITE = "W"
    BLACK = "B"

    @property
    def other(self) -> Colour:
        return Colour.BLACK if self is Colour.WHITE else Colour.WHITE


class Result(enum.Enum):
    """The result of a game, in the usual notation."""

    WHITE_WIN = "1-0"
    BLACK_WIN = "0-1"
    DRAW = "1/2-1/2"

    def points(self, colour: Colour) -> float:
        """What the player of ``colour`` scores."""
        if self is Result.DRAW:
            return 0.5
        won = Colour.WHITE if self is Result.WHITE_WIN else Colour.BLACK
        return 1.0 if colour is won else 0.0

    @classmethod
    def from_winner(cls, winner: Colour | None) -> Result:
        """The result of a game that ``winner`` won (None: a draw)."""
        if winner is None:
            return cls.DRAW
        return cls.WHITE_WIN if winner is Colour.WHITE else cls.BLACK_WIN


#: Points for the pairing-allocated bye (a round without an opponent, given for an odd count).
BYE_POINTS = 1.0


class Bye(enum.Enum):
    """A round without an opponent, by its TRF code: the pairing-allocated bye (``U``),
    or one the organiser gave before the pairing (a full-, half- or zero-point bye: the
    player is not paired that round)."""

    PAIRING = "U"
    FULL = "F"
    HALF = "H"
    ZERO = "Z"

    @property
    def points(self) -> float:
        return {"U": BYE_POINTS, "F": 1.0, "H": 0.5, "Z": 0.0}[self.value]


@dataclass(frozen=True)
class Player:
    """One entrant. ``name`` is unique in the event and is what the tables show."""

    name: str
    rating: int = 0
    withdrawn: bool = False


@dataclass(frozen=True)
class Pairing:
    """Who plays whom on which board in a round; ``black`` None is a bye for ``white``."""

    round: int
    board: int
    white: str
    black: str | None

    @property
    def is_bye(self) -> bool:
        return self.black is None

    def colour_of(self, name: str) -> Colour | None:
        """The colour ``name`` plays here, or None when not in this pairing (or on a bye)."""
        if name == self.white and self.black is not None:
            return Colour.WHITE
        if name == self.black:
            return Colour.BLACK
        return None

    def opponent_of(self, name: str) -> str | None:
        if name == self.white:
            return self.black
        if name == self.black:
            return self.white
        return None


@dataclass(frozen=True)
class Game:
    """A pairing and its result: None while unplayed (or abandoned without a winner).

    ``forfeit``: the game was not played; the result gives the point to the side who
    came (TRF ``+``/``-``), and with no result neither came (both lose). A forfeit is
    no game for colours, floats or rematches (FIDE C.04.1, as bbpPairings counts it).
    ``bye``: what kind of bye a pairing without Black is.
    """

    pairing: Pairing
    result: Result | None = None
    forfeit: bool = False
    bye: Bye = Bye.PAIRING

    @property
    def complete(self) -> bool:
        """Whether the game needs nothing more: a result, a forfeit or a bye."""
        return self.pairing.is_bye or self.forfeit or self.result is not None

    @property
    def played(self) -> bool:
        """Whether the two players met over the board (not a bye, not a forfeit)."""
        return not self.pairing.is_bye and not self.forfeit

    def points(self, name: str) -> float | None:
        """What ``name`` scored here; None while there is no result."""
        if self.pairing.is_bye:
            return self.bye.points if name == self.pairing.white else None
        colour = self.pairing.colour_of(name)
        if colour is None:
            return None
        if self.result is None:
            return 0.0 if self.forfeit else None
        return self.result.points(colour)


def check_unique(players: Iterable[Player]) -> None:
    """Raise DuplicatePlayerError when two players share a name, ignoring case ("ana"
    beside "Ana" would be two players nobody at a table can tell apart)."""
    seen: dict[str, str] = {}
    for p in players:
        key = p.name.casefold()
        if key in seen:
            held = seen[key]
            also = "" if held == p.name else f" (as {held!r})"
            raise DuplicatePlayerError(f"two players named {p.name!r}{also}")
        seen[key] = p.name


def initial_colour(players: Sequence[Player], games: Iterable[Game]) -> Colour:
    """The colour the top seed had (or would have had) in the first round with colours
    (TRF ``XXC white1``/``black1``): as bbpPairings infers it, the colour of the first
    player in seed order who took part in that round's pairing (White when none did)."""
    games = [g for g in games if g.pairing.black is not None or g.bye is Bye.PAIRING]
    first = min((g.pairing.round for g in games if g.pairing.black is not None), default=0)
    took_part = {
        name
        for g in games
        if g.pairing.round <= first
        for name in (g.pairing.white, g.pairing.black)
    }
    colour = {
        name: c
        for g in games
        if g.pairing.round == first
        for name in (g.pairing.white, g.pairing.black)
        if name is not None and (c := g.pairing.colour_of(name)) is not None
    }
    for p in players:
        if p.name in took_part:
            return colour.get(p.name, Colour.WHITE)
    return Colour.WHITE


def seed_order(players: Sequence[Player]) -> list[Player]:
    """Players by rating, highest first; equal ratings keep their registration order."""
    return sorted(players, key=lambda p: -p.rating)
