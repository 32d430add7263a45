"""The ledger's archive and check: the whole event as JSON for a new hub, and each game
and result against a fresh derivation from its events."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from arbiter.hub.errors import ArchiveError
from arbiter.hub.scoring import derive, derive_game, game_events, scored_game
from arbiter.hub.store import LedgerStore
from arbiter.hub.table_events import TableEvents

#: The version of the archive this ledger writes and reads (the events': wire.FORMAT).
FORMAT = 1

#: Archive sections, in the order they are written and imported (foreign keys).
_ARCHIVE_TABLES = {
    "meta": ("key", "value"),
    "players": ("name", "rating", "withdrawn", "registered"),
    "rounds": ("number", "system", "created_at"),
    "pairings": ("round", "board", "white", "black", "result", "table_name", "corrected",
                 "pairing_id", "forfeit"),
    "byes": ("round", "player", "kind"),
    "tables": ("name", "online", "status", "last_seen"),
    "events": ("table_name", "seq", "game", "type", "payload", "received_at"),
    "records": ("table_name", "game", "payload", "received_at"),
    "corrections": ("id", "at", "who", "what", "target", "before", "after"),
    "rejections": ("id", "at", "table_name", "seq", "reason"),
    "resends": ("table_name", "id", "ranges", "asked_at", "records"),
    "refused": ("table_name", "total"),
}
#: Sections newer than the archive format: an older archive without them imports as empty.
_ARCHIVE_LATER = frozenset({"resends", "refused", "byes"})
#: Columns newer than the archive format: an older archive's rows import them as their
#: value in a ledger from before them (NULL: no pairing id; 0: not forfeited; no records
#: asked for).
_COLUMNS_LATER = {"pairing_id": None, "forfeit": 0, "records": "[]"}
_ORDER = {
    "meta": "key", "players": "registered", "rounds": "number", "pairings": "round, board",
    "tables": "name", "events": "table_name, seq", "records": "table_name, game",
    "corrections": "id", "rejections": "id", "byes": "round, player", "resends": "table_name",
    "refused": "table_name",
    "games": "table_name, game",
}


class Archive:
    """Verify, export and import the ledger in ``store`` (``Ledger.archive``); ``events``
    gives the games held, to check them."""

    def __init__(self, store: LedgerStore, events: TableEvents) -> None:
        self.store = store
        self.events = events

    def verify(self) -> list[str]:
        """What is inconsistent: each game row against a fresh derivation from its events."""
        problems: list[str] = []
        with self.store.locked() as db:
            (check,) = db.execute("PRAGMA integrity_check").fetchone()
            if check != "ok":
                problems.append(f"integrity_check: {check}")
            held = {(g.table, g.game): g for g in self.events.games()}
            keys = db.execute("SELECT DISTINCT table_name, game FROM events").fetchall()
            for table, game in keys:
                fresh = derive_game(table, game, game_events(db, table, game))
                got = held.pop((table, game), None)
                if got is None or (got.challenges, got.lost_w, got.lost_b, got.ending,
                                   got.result, got.round, got.board) != (
                        fresh.challenges, fresh.lost_w, fresh.lost_b, fresh.ending,
                        fresh.result, fresh.round, fresh.board):
                    problems.append(f"game {game} of table {table} differs from its events")
            problems += _verify_scores(db)
            problems += [f"game {g} of table {t} has no events" for t, g in held]
        return problems

    def export(self) -> dict[str, Any]:
        """The whole event as JSON-ready data, for :meth:`load` into a new hub."""
        with self.store.locked() as db:
            out: dict[str, Any] = {"format": FORMAT, "event": self.store.event}
            for name, columns in _ARCHIVE_TABLES.items():
                rows = db.execute(
                    f"SELECT {', '.join(columns)} FROM {name} ORDER BY {_ORDER[name]}"
                ).fetchall()
                out[name] = [dict(zip(columns, row, strict=True)) for row in rows]
        return out

    def load(self, archive: Mapping[str, Any]) -> None:
        """Load an archive into this ledger, which must be empty and of the same event."""
        event = self.store.event
        if archive.get("format") != FORMAT or archive.get("event") != event:
            raise ArchiveError(f"not a format {FORMAT} archive of event {event!r}")
        if self.store.read("SELECT 1 FROM players UNION SELECT 1 FROM events LIMIT 1"):
            raise ArchiveError("the ledger already holds an event: import into a new one")
        try:
            with self.store.write() as db:
                db.execute("DELETE FROM meta")
                for name, columns in _ARCHIVE_TABLES.items():
                    marks = ", ".join("?" for _ in columns)
                    db.executemany(
                        f"INSERT INTO {name} ({', '.join(columns)}) VALUES ({marks})",
                        [tuple(row.get(c, _COLUMNS_LATER[c]) if c in _COLUMNS_LATER else row[c]
                               for c in columns) for row in (
                            archive.get(name, []) if name in _ARCHIVE_LATER else archive[name])],
                    )
                for table, game in db.execute(
                    "SELECT DISTINCT table_name, game FROM events"
                ).fetchall():
                    derive(db, table, game)
        except (KeyError, TypeError, sqlite3.IntegrityError) as exc:
            raise ArchiveError(f"the archive is damaged: {exc}") from None


def _verify_scores(db: sqlite3.Connection) -> list[str]:
    """Each board's scored game and result against the rule of
    :func:`arbiter.hub.scoring.score`."""
    problems: list[str] = []
    boards = db.execute(
        "SELECT round, board, result, corrected FROM pairings ORDER BY round, board"
    ).fetchall()
    for round_number, board, result, corrected in boards:
        chosen, candidates = scored_game(db, round_number, board)
        if not candidates:
            continue
        scored = [g for (g,) in db.execute(
            "SELECT game FROM games WHERE round=? AND board=? AND scored=1",
            (round_number, board))]
        want = next((r for _t, g, _e, r in candidates if g == chosen), None)
        if scored != ([chosen] if chosen else []) or (not corrected and result != want):
            problems.append(f"round {round_number} board {board}: its result is not the"
                            " one of its scored game")
    return problems
