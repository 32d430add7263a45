"""The event's length: its announced number of rounds, set by the organiser at the start
(the organiser page, the API, ``gg-arbiter hub rounds N``) and extended the same way,
each change audited by the administration.

Once it is set, no round is paired past it (Swiss, round robin or by hand): the final
round's Swiss rule reads it, the pages say "Round 2 of 5", and the TRF export writes it as
``XXR``. Pairing past it is refused, naming the way to extend the event.
"""

from __future__ import annotations

import sqlite3

from arbiter import wire
from arbiter.hub.errors import EventLengthError
from arbiter.hub.store import LedgerStore

#: The most rounds an event may announce: the most a table's assignment can name.
MAX_ROUNDS = wire.MAX_ROUND
_KEY = "total_rounds"


def announced(store: LedgerStore) -> int | None:
    """The announced number of rounds (None: not set)."""
    raw = store.meta(_KEY)
    return None if raw is None else int(raw)


def announce(db: sqlite3.Connection, rounds: int) -> int | None:
    """Set the length to ``rounds`` inside the open write ``db``; returns the length it
    had. EventLengthError: not from the rounds paired (at least 1) to MAX_ROUNDS."""
    if isinstance(rounds, bool) or not isinstance(rounds, int) or not 1 <= rounds <= MAX_ROUNDS:
        raise EventLengthError(
            f"{rounds!r} rounds: an event has from 1 to {MAX_ROUNDS} rounds")
    (paired,) = db.execute("SELECT COUNT(*) FROM rounds").fetchone()
    if rounds < paired:
        raise EventLengthError(
            f"{rounds} rounds: the event already has {paired} paired; its length cannot be"
            " shorter")
    row = db.execute("SELECT value FROM meta WHERE key=?", (_KEY,)).fetchone()
    db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (_KEY, str(rounds)))
    return None if row is None else int(row[0])


def check_next(db_or_store: sqlite3.Connection | LedgerStore, number: int) -> None:
    """Refuse to pair round ``number`` past the announced length (EventLengthError)."""
    if isinstance(db_or_store, LedgerStore):
        total = announced(db_or_store)
    else:
        row = db_or_store.execute("SELECT value FROM meta WHERE key=?", (_KEY,)).fetchone()
        total = None if row is None else int(row[0])
    if total is not None and number > total:
        raise EventLengthError(
            f"round {number}: the event has {total} round{'' if total == 1 else 's'}, all"
            " paired; to play more, extend the event first (the organiser page's"
            f" \"Rounds\" field, or gg-arbiter hub rounds {number})")
