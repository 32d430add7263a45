"""The ledger's table state: what each table last said (online, status, records), what it
lacks, and which tables of the round are silent."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta
from typing import cast

from arbiter import wire
from arbiter.hub.errors import RecordRefusedError
from arbiter.hub.store import LedgerStore
from arbiter.hub.table_events import TableEvents

#: How long a table of the round may publish nothing the hub gets before it is flagged.
PUBLISHES_NOTHING_AFTER = timedelta(minutes=1)
#: Records kept per table at most. A table publishes one record a game it finished; a
#: long event is 10 to 15 rounds, a game replayed now and then: 200 is ten times that.
RECORDS_PER_TABLE = 200
#: Bytes of records kept per table at most: a long game's record is about 20 KiB (the
#: wire allows 64), so 200 long games; 3,000 60 KB records no longer grow the ledger 178 MB.
RECORD_BYTES_PER_TABLE = 4 * 1024 * 1024
#: Records kept per table of games the ledger has no event of (yet: a retained record may
#: come before the game's events, after a restart): a few, not thousands.
UNKNOWN_GAME_RECORDS = 10


class TableState:
    """Tables' retained state, in ``store`` (``Ledger.tables``); ``events`` for the gaps."""

    def __init__(self, store: LedgerStore, events: TableEvents) -> None:
        self.store = store
        self.events = events

    def names(self) -> list[str]:
        """Every table heard of."""
        return [n for (n,) in self.store.read("SELECT name FROM tables ORDER BY name")]

    def set_online(self, table: str, online: bool) -> None:
        """Note a table's retained ``online`` flag."""
        with self.store.write(durable=False) as db:
            db.execute(
                "INSERT INTO tables (name, online, last_seen) VALUES (?, ?, ?)"
                " ON CONFLICT(name) DO UPDATE SET online=excluded.online,"
                " last_seen=excluded.last_seen",
                (table, int(online), self.store.now()),
            )

    def set_status(self, table: str, status: wire.StatusMessage) -> None:
        """Note a table's retained public ``status``."""
        with self.store.write(durable=False) as db:
            db.execute(
                "INSERT INTO tables (name, status, last_seen) VALUES (?, ?, ?)"
                " ON CONFLICT(name) DO UPDATE SET status=excluded.status,"
                " last_seen=excluded.last_seen",
                (table, wire.canonical(status), self.store.now()),
            )

    def set_record(self, table: str, game: str, record: wire.JsonObject) -> None:
        """Keep the full record a table published for a game that is over, within the
        table's bounds (:data:`RECORDS_PER_TABLE`, :data:`RECORD_BYTES_PER_TABLE`,
        :data:`UNKNOWN_GAME_RECORDS`); a record replacing one held counts once.

        :raises RecordRefusedError: past a bound (noted and logged as every refusal)."""
        text = wire.canonical(record)
        with self.store.write() as db:
            why = _over_bounds(db, table, game, len(text.encode()))
            if why is None:
                db.execute(
                    "INSERT INTO records VALUES (?, ?, ?, ?) ON CONFLICT(table_name, game)"
                    " DO UPDATE SET payload=excluded.payload",
                    (table, game, text, self.store.now()),
                )
        if why is not None:
            self.events.note_rejection(table, None, f"record/{game}: {why}")
            raise RecordRefusedError(f"table {table!r}, record/{game}: {why}")

    def record(self, table: str, game: str) -> wire.JsonObject | None:
        """The full record of a game, once its table published it (None before)."""
        rows = self.store.read(
            "SELECT payload FROM records WHERE table_name=? AND game=?", (table, game)
        )
        return cast(wire.JsonObject, json.loads(rows[0][0])) if rows else None

    def state(self, table: str) -> tuple[bool | None, wire.StatusMessage | None, str | None]:
        """(online, status, last seen) of a table; None where unknown."""
        rows = self.store.read(
            "SELECT online, status, last_seen FROM tables WHERE name=?", (table,))
        if not rows:
            return None, None, None
        online, status, seen = rows[0]
        # Stored as wire.parse returned it.
        return (None if online is None else bool(online),
                None if status is None else cast(wire.StatusMessage, json.loads(status)), seen)

    def missing(self, table: str) -> list[tuple[int, int]]:
        """The events' ``gaps`` plus the tail: the events after the highest held up to the
        last one the table's retained status says it published (``event_seq``)."""
        ((held, last),) = self.store.read(
            "SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM events WHERE table_name=?", (table,)
        )
        # Asked after every event of every table: read the sequence numbers only when
        # some are missing below the highest.
        runs = self.events.gaps(table) if held < last else []
        _online, status, _seen = self.state(table)
        published = status.get("event_seq") if status else None
        if published is not None and published > last:
            runs.append((last + 1, published))
        return runs

    def missing_records(self, table: str) -> list[str]:
        """The games of ``table`` (the first :data:`arbiter.wire.MAX_RECORDS`, in the
        order played) whose ``game_over`` the ledger holds and whose record it lacks, though
        the table has published it: every record goes out right after its game's
        ``game_over``, but a sealed abandoned game's only once the next game has begun,
        and then before that game's events: so an abandoned game's record is missing only
        once the ledger holds a later event of the table."""
        return [g for (g,) in self.store.read(
            "SELECT g.game FROM games g WHERE g.table_name=? AND g.ending IS NOT NULL"
            " AND NOT EXISTS(SELECT 1 FROM records r WHERE r.table_name=g.table_name"
            " AND r.game=g.game) AND (g.ending<>'abandoned' OR EXISTS(SELECT 1 FROM events"
            " e WHERE e.table_name=g.table_name AND e.seq>(SELECT MAX(o.seq) FROM events o"
            " WHERE o.table_name=g.table_name AND o.game=g.game)))"
            " ORDER BY g.started_seq, g.game LIMIT ?", (table, wire.MAX_RECORDS))]

    def silent(
        self, quiet: timedelta, grace: timedelta = PUBLISHES_NOTHING_AFTER
    ) -> list[tuple[str, str]]:
        """(table, why) for each table of the latest round with a game still to finish
        that is offline, has sent no event for ``quiet``, or publishes nothing the hub
        gets: nothing at all heard of it ``grace`` after the round was paired (a login or
        table name the broker's ACL refuses), or events its status counts that have not
        come for ``grace``."""
        rounds = self.store.read(
            "SELECT number, created_at FROM rounds ORDER BY number DESC LIMIT 1")
        if not rounds:
            return []
        number, paired_at = rounds[0]
        now = self.store.clock()
        silent: list[tuple[str, str]] = []
        for (table,) in self.store.read(
            "SELECT table_name FROM pairings WHERE round=? AND table_name IS NOT NULL"
            " AND result IS NULL AND forfeit=0 ORDER BY board", (number,)
        ):
            online, status, _seen = self.state(table)
            ((last, held),) = self.store.read(
                "SELECT MAX(received_at), COALESCE(MAX(seq), 0) FROM events WHERE table_name=?",
                (table,),
            )
            since = now - datetime.fromisoformat(last or paired_at)
            published = status.get("event_seq", 0) if status else 0
            if online is False:
                silent.append((table, "offline"))
            elif last is None and status is None and since > grace:
                silent.append((table, f"publishes nothing: not heard since round {number}"
                                          " was paired (check its login and table name)"))
            elif published > held and since > grace:
                silent.append((table, f"publishes nothing: its status counts {published}"
                                          f" events, {held} arrived"))
            elif last is None:
                silent.append((table, "no event yet"))
            elif since > quiet:
                silent.append((table, f"no event since {last}"))
        return silent


def _over_bounds(db: sqlite3.Connection, table: str, game: str, size: int) -> str | None:
    """Why ``table``'s record of ``game`` (``size`` bytes) may not be kept, or None."""
    ((count, total, held, unknown),) = db.execute(
        "SELECT COUNT(*), COALESCE(SUM(LENGTH(CAST(payload AS BLOB))), 0),"
        " COALESCE(SUM(LENGTH(CAST(payload AS BLOB))) FILTER (WHERE game=?), -1),"
        " COUNT(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM games g"
        " WHERE g.table_name=r.table_name AND g.game=r.game))"
        " FROM records r WHERE table_name=?", (game, table)).fetchall()
    if held >= 0:  # replacing its own record: only the bytes can go over
        return (None if total - held + size <= RECORD_BYTES_PER_TABLE
                else f"over the {RECORD_BYTES_PER_TABLE} bytes of records kept per table")
    if count >= RECORDS_PER_TABLE:
        return f"over the {RECORDS_PER_TABLE} records kept per table"
    if total + size > RECORD_BYTES_PER_TABLE:
        return f"over the {RECORD_BYTES_PER_TABLE} bytes of records kept per table"
    known = db.execute("SELECT 1 FROM games WHERE table_name=? AND game=?",
                       (table, game)).fetchone()
    if known is None and unknown >= UNKNOWN_GAME_RECORDS:
        return (f"a record of a game with no event here, past the {UNKNOWN_GAME_RECORDS}"
                " kept per table")
    return None
