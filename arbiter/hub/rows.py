"""The rows the ledger gives: pairings, games, corrections, resend requests."""

from __future__ import annotations

from dataclasses import dataclass

from arbiter.tournament.model import Game, Pairing, Result


@dataclass(frozen=True)
class PairingRow:
    """A pairing as the ledger holds it: its table, its result, whether corrected, its
    id (made when the round was paired; None in a ledger older than issue 27), and whether
    the game was forfeited (``result`` then gives the point to the side who came; None:
    neither came)."""

    pairing: Pairing
    result: Result | None
    table: str | None
    corrected: bool
    pairing_id: str | None = None
    forfeit: bool = False

    @property
    def game(self) -> Game:
        return Game(self.pairing, self.result, self.forfeit)


@dataclass(frozen=True)
class GameRow:
    """One game played at a table, as its events describe it (no rank in it)."""

    table: str
    game: str
    round: int | None
    board: int | None
    white: str | None
    black: str | None
    challenges: int
    lost_w: int
    lost_b: int
    ending: str | None
    winner: str | None
    result: Result | None
    scored: bool
    #: Past the table's limit of games under its round: kept, never scored.
    over_limit: bool = False


@dataclass(frozen=True)
class Correction:
    """One entry of the audit log."""

    id: int
    at: str
    who: str
    what: str
    target: str
    before: str | None
    after: str | None


@dataclass(frozen=True)
class ResendAsk:
    """The last resend request of a table: its id (random), the runs asked for, and when
    (None only in a ledger older than random ids: an id it learnt from the broker), and
    the games whose records it asked for."""

    table: str
    id: int
    ranges: tuple[tuple[int, int], ...]
    asked_at: str | None
    records: tuple[str, ...] = ()
