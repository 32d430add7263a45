"""A ledger's archive and check: the whole event as JSON for a new hub, and each game
and result against a fresh derivation from its events."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from arbiter.hub.administration import Administration
from arbiter.hub.errors import ArchiveError
from arbiter.hub.intake import derive_game, game_events, scored_game

#: The version of the archive this ledger writes and reads (the events': wire.FORMAT).
FORMAT = 1

#: Archive sections, in the order they are written and imported (foreign keys).
_ARCHIVE_TABLES = {
    "meta": ("key", "value"),
    "players": ("name", "rating", "withdrawn", "registered"),
    "rounds": ("number", "system", "created_at"),
    "pairings": ("round", "board", "white", "black", "result", "table_name", "corrected"),
    "tables": ("name", "online", "status", "last_seen"),
    "events": ("table_name", "seq", "game", "type", "payload", "received_at"),
    "records": ("table_name", "game", "payload", "received_at"),
    "corrections": ("id", "at", "who", "what", "target", "before", "after"),
    "rejections": ("id", "at", "table_name", "seq", "reason"),
    "resends": ("table_name", "id", "ranges", "asked_at"),
    "refused": ("table_name", "total"),
}
#: Sections newer than the archive format: an older archive without them imports as empty.
_ARCHIVE_LATER = frozenset({"resends", "refused"})
_ORDER = {
    "meta": "key", "players": "registered", "rounds": "number", "pairings": "round, board",
    "tables": "name", "events": "table_name, seq", "records": "table_name, game",
    "corrections": "id", "rejections": "id", "resends": "table_name", "refused": "table_name",
    "games": "table_name, game",
}



class Archive(Administration):
    """Verify, export and import (see :class:`arbiter.hub.ledger.Ledger`)."""

    # --- checking and archives --------------------------------------------------

    def verify(self) -> list[str]:
        """What is inconsistent: each game row against a fresh derivation from its events."""
        problems: list[str] = []
        with self._lock:
            (check,) = self._db.execute("PRAGMA integrity_check").fetchone()
            if check != "ok":
                problems.append(f"integrity_check: {check}")
            held = {(g.table, g.game): g for g in self.games()}
            keys = self._db.execute("SELECT DISTINCT table_name, game FROM events").fetchall()
            for table, game in keys:
                fresh = derive_game(table, game, game_events(self._db, table, game))
                got = held.pop((table, game), None)
                if got is None or (got.challenges, got.lost_w, got.lost_b, got.ending,
                                   got.result, got.round, got.board) != (
                        fresh.challenges, fresh.lost_w, fresh.lost_b, fresh.ending,
                        fresh.result, fresh.round, fresh.board):
                    problems.append(f"game {game} of table {table} differs from its events")
            problems += self._verify_scores()
            problems += [f"game {g} of table {t} has no events" for t, g in held]
        return problems

    def _verify_scores(self) -> list[str]:
        """Each board's scored game and result against the rule of :meth:`_score`."""
        problems: list[str] = []
        boards = self._db.execute(
            "SELECT round, board, result, corrected FROM pairings ORDER BY round, board"
        ).fetchall()
        for round_number, board, result, corrected in boards:
            chosen, candidates = scored_game(self._db, round_number, board)
            if not candidates:
                continue
            scored = [g for (g,) in self._db.execute(
                "SELECT game FROM games WHERE round=? AND board=? AND scored=1",
                (round_number, board))]
            want = next((r for _t, g, _e, r in candidates if g == chosen), None)
            if scored != ([chosen] if chosen else []) or (not corrected and result != want):
                problems.append(f"round {round_number} board {board}: its result is not the"
                                " one of its scored game")
        return problems

    def export_archive(self) -> dict[str, Any]:
        """The whole event as JSON-ready data, for ``import_archive`` into a new hub."""
        with self._lock:
            out: dict[str, Any] = {"format": FORMAT, "event": self.event}
            for name, columns in _ARCHIVE_TABLES.items():
                rows = self._db.execute(
                    f"SELECT {', '.join(columns)} FROM {name} ORDER BY {_ORDER[name]}"
                ).fetchall()
                out[name] = [dict(zip(columns, row, strict=True)) for row in rows]
        return out

    def import_archive(self, archive: Mapping[str, Any]) -> None:
        """Load an archive into this ledger, which must be empty and of the same event."""
        if archive.get("format") != FORMAT or archive.get("event") != self.event:
            raise ArchiveError(f"not a format {FORMAT} archive of event {self.event!r}")
        if self._read("SELECT 1 FROM players UNION SELECT 1 FROM events LIMIT 1"):
            raise ArchiveError("the ledger already holds an event: import into a new one")
        try:
            with self._write() as db:
                db.execute("DELETE FROM meta")
                for name, columns in _ARCHIVE_TABLES.items():
                    marks = ", ".join("?" for _ in columns)
                    db.executemany(
                        f"INSERT INTO {name} ({', '.join(columns)}) VALUES ({marks})",
                        [tuple(row[c] for c in columns) for row in (
                            archive.get(name, []) if name in _ARCHIVE_LATER else archive[name])],
                    )
                for table, game in db.execute(
                    "SELECT DISTINCT table_name, game FROM events"
                ).fetchall():
                    self._derive(db, table, game)
        except (KeyError, TypeError, sqlite3.IntegrityError) as exc:
            raise ArchiveError(f"the archive is damaged: {exc}") from None
