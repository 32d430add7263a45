"""The event's ledger: one SQLite file, the hub's authoritative record.

It holds the players, rounds, pairings (with their table and result), every
table event exactly once by (table, seq), the games those events describe,
corrections with their audit trail, and the tables' last known state.

Durability: WAL journal with ``synchronous=FULL``, so a write is on disk when
its method returns (the commit fsyncs the WAL); each method is one
transaction, so a killed hub leaves either all of an operation or none of it.

Results come from the tables: a ``game_over`` event ends the game, and the
pairing gets its result only when the table's ``new_game`` for that game
carried the assignment of that very pairing (same round, board, players, and
the pairing assigned to that table). A game at an unassigned table is kept
but not scored. An organiser's correction wins over later events.

The ledger is one class of five concerns, each its own module: the file and its
transactions (:mod:`arbiter.hub.store`), event intake with gaps and resends
(:mod:`arbiter.hub.intake`), table state (:mod:`arbiter.hub.tables`), tournament
administration (:mod:`arbiter.hub.administration`), archive and check
(:mod:`arbiter.hub.archive`). This module is the façade the rest of the hub imports.
"""

from __future__ import annotations

from arbiter.hub.administration import MAX_RATING, SYSTEMS, assignment_payload
from arbiter.hub.archive import FORMAT, Archive
from arbiter.hub.intake import canonical
from arbiter.hub.rows import Correction, GameRow, PairingRow, ResendAsk
from arbiter.hub.tables import PUBLISHES_NOTHING_AFTER

__all__ = [
    "FORMAT", "MAX_RATING", "PUBLISHES_NOTHING_AFTER", "SYSTEMS", "Correction", "GameRow",
    "Ledger", "PairingRow", "ResendAsk", "assignment_payload", "canonical",
]


class Ledger(Archive):
    """The ledger of one event in the SQLite file at ``path`` (created when missing).

    Thread-safe: every public method is one transaction. Writes go through one
    connection under one lock; reads go through a second, read-only connection
    under a lock of their own, so a page or the live feed never waits while a
    writer commits (WAL lets readers see the last commit during a writer's fsync).
    """
