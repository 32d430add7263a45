"""The event's ledger: one SQLite file, the hub's authoritative record.

It holds the players, rounds, pairings (with their table and result), every
table event exactly once by (table, seq), the games those events describe,
corrections with their audit trail, and the tables' last known state.

Durability: WAL journal with ``synchronous=FULL``, so a write is on disk when
its method returns (the commit fsyncs the WAL); each method is one
transaction, so a killed hub leaves either all of an operation or none of it.

Results come from the tables: a ``game_over`` event ends the game, and the
pairing gets its result only when the table's ``new_game`` for that game
carried the assignment of that very pairing (same round, board, players, the
pairing assigned to that table, and the pairing's random id, so no game of an
earlier run or another ledger counts). A game at an unassigned table is kept
but not scored, as are a table's games past its limit a round
(:data:`arbiter.hub.scoring.MAX_GAMES_PER_ROUND`). An organiser's correction wins
over later events.

The ledger is composed, not inherited: :class:`Ledger` builds one
:class:`~arbiter.hub.store.LedgerStore` (the file, its two connections, its transactions)
and five parts that each hold it: ``events`` (:mod:`arbiter.hub.table_events`: events
kept once, gaps, refusals, resend requests), ``tables`` (:mod:`arbiter.hub.tables`: each
table's retained state, the silent ones), ``admin`` (:mod:`arbiter.hub.administration`:
players, rounds, pairings, corrections, standings) and ``archive``
(:mod:`arbiter.hub.archive`: check, export, import), and ``unplayed``
(:mod:`arbiter.hub.unplayed`: forfeits, the byes the organiser gives, events imported
from TRF). How events become games and boards
get results, which three of them need, is the functions of :mod:`arbiter.hub.scoring`.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Self

from arbiter.hub.administration import (
    MAX_RATING,
    SYSTEMS,
    Administration,
    assignment_payload,
)
from arbiter.hub.archive import FORMAT, Archive
from arbiter.hub.rows import Correction, GameRow, PairingRow, ResendAsk
from arbiter.hub.scoring import MAX_GAMES_PER_ROUND
from arbiter.hub.store import LedgerStore, utc_now
from arbiter.hub.table_events import TableEvents
from arbiter.hub.tables import PUBLISHES_NOTHING_AFTER, TableState
from arbiter.hub.unplayed import Unplayed

__all__ = [
    "FORMAT", "MAX_GAMES_PER_ROUND", "MAX_RATING", "PUBLISHES_NOTHING_AFTER", "SYSTEMS",
    "Correction", "GameRow",
    "Ledger", "PairingRow", "ResendAsk", "assignment_payload",
]


class Ledger:
    """The ledger of one event in the SQLite file at ``path`` (created when missing).

    Thread-safe: every public method of its parts is one transaction (or one read).
    Writes go through one connection under one lock; reads go through a second,
    read-only connection under a lock of their own, so a page or the live feed never
    waits while a writer commits (WAL lets readers see the last commit during a
    writer's fsync). ``store.batch()`` makes many writes one transaction.
    """

    def __init__(
        self, path: str | Path, event: str, *, clock: Callable[[], datetime] = utc_now
    ) -> None:
        self.store = LedgerStore(path, event, clock=clock)
        self.path = self.store.path
        self.event = event
        self.events = TableEvents(self.store)
        self.tables = TableState(self.store, self.events)
        self.admin = Administration(self.store)
        self.archive = Archive(self.store, self.events)
        self.unplayed = Unplayed(self.store, self.admin)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
