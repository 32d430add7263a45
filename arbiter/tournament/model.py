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


#: Points for a bye (a round without an opponent, given for an odd count).
BYE_POINTS = 1.0


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
    """A pairing and its result: None while unplayed (or abandoned without a winner)."""

    pairing: Pairing
    result: Result | None = None

    def points(self, name: str) -> float | None:
        """What ``name`` scored here; None while there is no result."""
        if self.pairing.is_bye:
            return BYE_POINTS if name == self.pairing.white else None
        colour = self.pairing.colour_of(name)
        if colour is None or self.result is None:
            return None
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


def seed_order(players: Sequence[Player]) -> list[Player]:
    """Players by rating, highest first; equal ratings keep their registration order."""
    return sorted(players, key=lambda p: -p.rating)
