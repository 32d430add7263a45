"""The ledger's SQLite file and its transactions (one writer, one reader, group commit).

:class:`LedgerStore` owns both connections and their locks; the ledger's parts
(:mod:`arbiter.hub.table_events`, :mod:`arbiter.hub.tables`,
:mod:`arbiter.hub.administration`, :mod:`arbiter.hub.archive`) each hold it and go
through :meth:`LedgerStore.write`, :meth:`LedgerStore.read` and their kin.

Durability: WAL journal with ``synchronous=FULL``, so a write is on disk when
its block ends (the commit fsyncs the WAL); each part's method is one
transaction, so a killed hub leaves either all of an operation or none of it.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

from arbiter.hub.errors import LedgerEventError, LoneSurrogateError

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS players (
    name TEXT PRIMARY KEY, rating INTEGER NOT NULL, withdrawn INTEGER NOT NULL DEFAULT 0,
    registered INTEGER NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS rounds (
    number INTEGER PRIMARY KEY, system TEXT NOT NULL, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pairings (
    round INTEGER NOT NULL REFERENCES rounds(number), board INTEGER NOT NULL,
    white TEXT NOT NULL, black TEXT, result TEXT, table_name TEXT,
    corrected INTEGER NOT NULL DEFAULT 0, pairing_id TEXT,
    PRIMARY KEY (round, board), UNIQUE (round, table_name));
CREATE TABLE IF NOT EXISTS tables (
    name TEXT PRIMARY KEY, online INTEGER, status TEXT, last_seen TEXT);
CREATE TABLE IF NOT EXISTS events (
    table_name TEXT NOT NULL, seq INTEGER NOT NULL, game TEXT NOT NULL, type TEXT NOT NULL,
    payload TEXT NOT NULL, received_at TEXT NOT NULL, PRIMARY KEY (table_name, seq));
CREATE TABLE IF NOT EXISTS games (
    table_name TEXT NOT NULL, game TEXT NOT NULL, round INTEGER, board INTEGER,
    white TEXT, black TEXT, challenges INTEGER NOT NULL, lost_w INTEGER NOT NULL,
    lost_b INTEGER NOT NULL, ending TEXT, winner TEXT, result TEXT,
    scored INTEGER NOT NULL, started_seq INTEGER, over_limit INTEGER NOT NULL DEFAULT 0,
    pairing_id TEXT, limit_round INTEGER, PRIMARY KEY (table_name, game));
CREATE TABLE IF NOT EXISTS corrections (
    id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, who TEXT NOT NULL,
    what TEXT NOT NULL, target TEXT NOT NULL, before TEXT, after TEXT);
CREATE TABLE IF NOT EXISTS records (
    table_name TEXT NOT NULL, game TEXT NOT NULL, payload TEXT NOT NULL,
    received_at TEXT NOT NULL, PRIMARY KEY (table_name, game));
CREATE TABLE IF NOT EXISTS rejections (
    id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, table_name TEXT NOT NULL,
    seq INTEGER, reason TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS rejections_of_table ON rejections (table_name, id);
CREATE TABLE IF NOT EXISTS refused (table_name TEXT PRIMARY KEY, total INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS resends (
    table_name TEXT PRIMARY KEY, id INTEGER NOT NULL, ranges TEXT NOT NULL, asked_at TEXT,
    records TEXT NOT NULL DEFAULT '[]');
CREATE TABLE IF NOT EXISTS byes (
    round INTEGER NOT NULL, player TEXT NOT NULL REFERENCES players(name),
    kind TEXT NOT NULL CHECK (kind IN ('F', 'H', 'Z')), PRIMARY KEY (round, player));
"""

#: Columns added since the first ledgers: (table, column, its declaration); a ledger
#: without one gets it at open (``started_seq`` filled from the events).
_ADDED_COLUMNS = (
    ("pairings", "pairing_id", "TEXT"),
    ("games", "started_seq", "INTEGER"),
    ("games", "over_limit", "INTEGER NOT NULL DEFAULT 0"),
    ("games", "pairing_id", "TEXT"),
    ("games", "limit_round", "INTEGER"),
    ("pairings", "forfeit", "INTEGER NOT NULL DEFAULT 0"),
    ("resends", "records", "TEXT NOT NULL DEFAULT '[]'"),
)
#: Indexes, made after the columns they name exist. Every query a page or an event runs
#: goes through one, so its time does not grow with what one table sent (issue 27).
_INDEXES = """
CREATE INDEX IF NOT EXISTS events_of_game ON events (table_name, game, seq);
CREATE INDEX IF NOT EXISTS games_of_board ON games (table_name, round, board, scored);
CREATE INDEX IF NOT EXISTS games_scored ON games (round, board, scored);
CREATE INDEX IF NOT EXISTS games_limit ON games (table_name, limit_round, over_limit, started_seq);
CREATE INDEX IF NOT EXISTS games_latest ON games (table_name, over_limit, started_seq);
"""


def _refuse_half_characters(exc: BaseException) -> None:
    """A value SQLite could not encode (a lone surrogate in a name, a table, a reason) is
    the caller's text, not the disk: raise it as the ledger's refusal (a 400, a refused
    message, a command's error line), never a crash."""
    if isinstance(exc, UnicodeEncodeError):
        raise LoneSurrogateError("text with half a character (a lone surrogate) cannot be"
                                 " kept: send whole characters") from None


def utc_now() -> datetime:
    return datetime.now(UTC)


class LedgerStore:
    """The SQLite file at ``path`` of one event's ledger (created when missing).

    Thread-safe: each :meth:`write` is one transaction. Writes go through one
    connection under one lock; reads go through a second, read-only connection
    under a lock of their own, so a page or the live feed never waits while a
    writer commits (WAL lets readers see the last commit during a writer's fsync).
    """

    def __init__(
        self, path: str | Path, event: str, *, clock: Callable[[], datetime] = utc_now
    ) -> None:
        self.path = Path(path)
        self.event = event
        self.clock = clock
        self._lock = threading.RLock()
        self._db = sqlite3.connect(
            str(self.path), isolation_level=None, check_same_thread=False, timeout=30
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA foreign_keys=ON")
        # The thread inside a write (so its own reads see what it has not committed yet),
        # and whether the open batch commits with an fsync.
        self._writer: int | None = None
        self._batch: bool | None = None
        with self._lock:
            self._db.executescript(_SCHEMA)  # its own transaction: executescript commits first
            self._add_columns()
            self._db.executescript(_INDEXES)
        with self.write() as db:
            row = db.execute("SELECT value FROM meta WHERE key='event'").fetchone()
            if row is None:
                db.execute("INSERT INTO meta VALUES ('event', ?)", (event,))
        if row is not None and row[0] != event:
            self._db.close()
            raise LedgerEventError(f"{self.path} is the ledger of event {row[0]!r}")
        self._read_lock = threading.RLock()  # re-entered by reads inside a snapshot()
        self._reader = sqlite3.connect(
            str(self.path), isolation_level=None, check_same_thread=False, timeout=30
        )
        self._reader.execute("PRAGMA query_only=ON")

    def _add_columns(self) -> None:
        """Bring a ledger written before :data:`_ADDED_COLUMNS` up to date (one transaction)."""
        missing = [(t, c, d) for t, c, d in _ADDED_COLUMNS
                   if c not in {row[1] for row in self._db.execute(f"PRAGMA table_info({t})")}]
        if not missing:
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            for table, column, declaration in missing:
                self._db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {declaration}")
            self._db.execute(
                "UPDATE games SET started_seq=(SELECT MIN(e.seq) FROM events e"
                " WHERE e.table_name=games.table_name AND e.game=games.game),"
                " limit_round=(SELECT number FROM rounds WHERE number=games.round)"
                " WHERE started_seq IS NULL")
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def close(self) -> None:
        with self._lock, self._read_lock:
            self._reader.close()
            self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @contextmanager
    def batch(self, *, durable: bool = True) -> Iterator[None]:
        """Group commit: every write this thread makes inside is one transaction, one fsync.

        Each write in it is a savepoint of its own, so a write that fails is undone
        alone and the others still commit. Nothing is on disk before the block ends;
        an exception out of the block rolls everything back. ``durable=False`` commits
        without an fsync, as ``write(durable=False)``; a durable write inside such a
        batch first commits what the batch holds and goes on with an fsync at the end.
        Other threads' writes wait for the batch; reads do not.
        """
        with self._lock:
            if self._batch is not None:  # already in one: join it
                yield
                return
            if not durable:
                self._db.execute("PRAGMA synchronous=NORMAL")
            try:
                self._db.execute("BEGIN IMMEDIATE")
                self._batch, self._writer = durable, threading.get_ident()
                try:
                    yield
                except BaseException:
                    if self._db.in_transaction:
                        self._db.execute("ROLLBACK")
                    raise
                self._commit()
            finally:
                if not self._batch:
                    self._db.execute("PRAGMA synchronous=FULL")
                self._batch, self._writer = None, None

    @contextmanager
    def write(self, *, durable: bool = True) -> Iterator[sqlite3.Connection]:
        """One write transaction; committed (and fsynced) on a normal exit.

        ``durable=False`` commits without its own fsync (WAL ``synchronous=NORMAL``):
        for what the broker keeps retained and gives again on restart (a table's
        ``online`` and ``status``), so the stream of them never queues the events'
        fsyncs. The next durable commit makes it durable too, in order.
        Inside :meth:`batch`, a savepoint of the batch's transaction instead.
        """
        with self._lock:
            if self._batch is not None:
                with self._savepoint(durable) as db:
                    yield db
                return
            if not durable:
                self._db.execute("PRAGMA synchronous=NORMAL")
            try:
                self._db.execute("BEGIN IMMEDIATE")
                self._writer = threading.get_ident()
                try:
                    yield self._db
                except BaseException as exc:
                    self._db.execute("ROLLBACK")
                    _refuse_half_characters(exc)
                    raise
                self._commit()
            finally:
                self._writer = None
                if not durable:
                    self._db.execute("PRAGMA synchronous=FULL")

    def _commit(self) -> None:
        try:
            self._db.execute("COMMIT")
        except sqlite3.Error:
            if self._db.in_transaction:  # a failed commit (busy, I/O) may leave it open
                self._db.execute("ROLLBACK")
            raise

    @contextmanager
    def _savepoint(self, durable: bool) -> Iterator[sqlite3.Connection]:
        """One write inside the open batch (the caller holds the lock)."""
        if not self._db.in_transaction:
            # SQLite rolled the whole batch back (disk full, I/O error): committing
            # the rest alone would ack messages whose neighbours were lost.
            raise sqlite3.OperationalError("the batch's transaction was rolled back")
        if durable and not self._batch:
            # The batch began without an fsync (retained flags only): commit them as
            # such and go on in a transaction that fsyncs at its end.
            self._db.execute("COMMIT")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("BEGIN IMMEDIATE")
            self._batch = True
        self._db.execute("SAVEPOINT one_write")
        try:
            yield self._db
        except BaseException as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK TO one_write")
                self._db.execute("RELEASE one_write")
            _refuse_half_characters(exc)
            raise
        self._db.execute("RELEASE one_write")

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Every read this thread makes inside sees one and the same commit (one read
        transaction: what the live feed reads for a message is consistent, and costs one
        set of locks instead of one per query). Writes do not wait for it; other threads'
        reads do, so keep it short."""
        with self._read_lock:
            if self._reader.in_transaction:  # already in one: join it
                yield
                return
            self._reader.execute("BEGIN")
            try:
                yield
            finally:
                self._reader.execute("COMMIT")

    @contextmanager
    def locked(self) -> Iterator[sqlite3.Connection]:
        """The write connection under the write lock, no transaction opened: no write
        commits while the caller reads several statements from it (a check, an archive)."""
        with self._lock:
            yield self._db

    def read(self, sql: str, args: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """The rows of one query: from the reader, or from the writer for the thread
        inside a write (so it sees what it has not committed yet)."""
        try:
            if self._writer == threading.get_ident():  # inside its own write: see it
                with self._lock:
                    return self._db.execute(sql, args).fetchall()
            with self._read_lock:
                return self._reader.execute(sql, args).fetchall()
        except UnicodeEncodeError as exc:
            _refuse_half_characters(exc)
            raise

    def audit(
        self, db: sqlite3.Connection, who: str, what: str, target: str,
        before: str | None, after: str | None,
    ) -> None:
        """One entry of the audit trail, inside the caller's write ``db``."""
        db.execute(
            "INSERT INTO corrections (at, who, what, target, before, after)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (self.now(), who, what, target, before, after),
        )

    def now(self) -> str:
        """The clock's time as the ledger stores it (UTC, ISO 8601, milliseconds)."""
        return self.clock().astimezone(UTC).isoformat(timespec="milliseconds")

    def meta(self, key: str) -> str | None:
        """An event setting (None: not set)."""
        rows = self.read("SELECT value FROM meta WHERE key=?", (key,))
        return rows[0][0] if rows else None
