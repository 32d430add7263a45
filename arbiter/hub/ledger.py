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
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from arbiter.hub.errors import (
    ArchiveError,
    AssignmentError,
    ContradictingEventError,
    LedgerEventError,
    MalformedEventError,
    TopicMismatchError,
    UnknownPairingError,
)
from arbiter.tournament.errors import PairingError, UnknownPlayerError
from arbiter.tournament.model import Colour, Game, Pairing, Player, Result, check_unique
from arbiter.tournament.players_csv import read_players_csv
from arbiter.tournament.roundrobin import berger_round
from arbiter.tournament.standings import DEFAULT_TIEBREAKS, Standing, TieBreak, standings
from arbiter.tournament.swiss import swiss_round

log = logging.getLogger(__name__)

#: The version of the table events and of the archive this ledger reads.
FORMAT = 1
EVENT_TYPES = ("new_game", "challenge", "game_over")
ENDINGS = ("flag_captured", "flag_home", "resignation", "draw", "abandoned")
SYSTEMS = ("swiss", "round-robin", "manual")

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
    corrected INTEGER NOT NULL DEFAULT 0,
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
    scored INTEGER NOT NULL, PRIMARY KEY (table_name, game));
CREATE TABLE IF NOT EXISTS corrections (
    id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, who TEXT NOT NULL,
    what TEXT NOT NULL, target TEXT NOT NULL, before TEXT, after TEXT);
CREATE TABLE IF NOT EXISTS records (
    table_name TEXT NOT NULL, game TEXT NOT NULL, payload TEXT NOT NULL,
    received_at TEXT NOT NULL, PRIMARY KEY (table_name, game));
CREATE TABLE IF NOT EXISTS rejections (
    id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, table_name TEXT NOT NULL,
    seq INTEGER, reason TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS resends (
    table_name TEXT PRIMARY KEY, id INTEGER NOT NULL, ranges TEXT NOT NULL, asked_at TEXT);
"""

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
}
#: Sections newer than the archive format: an older archive without them imports as empty.
_ARCHIVE_LATER = frozenset({"resends"})
_ORDER = {
    "meta": "key", "players": "registered", "rounds": "number", "pairings": "round, board",
    "tables": "name", "events": "table_name, seq", "records": "table_name, game",
    "corrections": "id", "rejections": "id", "resends": "table_name",
    "games": "table_name, game",
}


@dataclass(frozen=True)
class PairingRow:
    """A pairing as the ledger holds it: its table, its result, and whether corrected."""

    pairing: Pairing
    result: Result | None
    table: str | None
    corrected: bool

    @property
    def game(self) -> Game:
        return Game(self.pairing, self.result)


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
    """The last resend request of a table: its id, the runs asked for, and when (None: an
    id only learnt from the broker's retained request, not asked by this ledger)."""

    table: str
    id: int
    ranges: tuple[tuple[int, int], ...]
    asked_at: str | None


def canonical(payload: Mapping[str, Any]) -> str:
    """The one JSON text of a payload, so two copies of an event compare equal."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _utc_now() -> datetime:
    return datetime.now(UTC)


class Ledger:
    """The ledger of one event in the SQLite file at ``path`` (created when missing).

    Thread-safe: every public method is one transaction. Writes go through one
    connection under one lock; reads go through a second, read-only connection
    under a lock of their own, so a page or the live feed never waits while a
    writer commits (WAL lets readers see the last commit during a writer's fsync).
    """

    def __init__(
        self, path: str | Path, event: str, *, clock: Callable[[], datetime] = _utc_now
    ) -> None:
        self.path = Path(path)
        self.event = event
        self._clock = clock
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
        with self._write() as db:
            row = db.execute("SELECT value FROM meta WHERE key='event'").fetchone()
            if row is None:
                db.execute("INSERT INTO meta VALUES ('event', ?)", (event,))
        if row is not None and row[0] != event:
            self._db.close()
            raise LedgerEventError(f"{self.path} is the ledger of event {row[0]!r}")
        self._read_lock = threading.Lock()
        self._reader = sqlite3.connect(
            str(self.path), isolation_level=None, check_same_thread=False, timeout=30
        )
        self._reader.execute("PRAGMA query_only=ON")

    def close(self) -> None:
        with self._lock, self._read_lock:
            self._reader.close()
            self._db.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    @contextmanager
    def batch(self, *, durable: bool = True) -> Iterator[None]:
        """Group commit: every write this thread makes inside is one transaction, one fsync.

        Each write in it is a savepoint of its own, so a write that fails is undone
        alone and the others still commit. Nothing is on disk before the block ends;
        an exception out of the block rolls everything back. ``durable=False`` commits
        without an fsync, as ``_write(durable=False)``; a durable write inside such a
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
    def _write(self, *, durable: bool = True) -> Iterator[sqlite3.Connection]:
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
                except BaseException:
                    self._db.execute("ROLLBACK")
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
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK TO one_write")
                self._db.execute("RELEASE one_write")
            raise
        self._db.execute("RELEASE one_write")

    def _read(self, sql: str, args: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        if self._writer == threading.get_ident():  # inside its own write: see it
            with self._lock:
                return self._db.execute(sql, args).fetchall()
        with self._read_lock:
            return self._reader.execute(sql, args).fetchall()

    def _now(self) -> str:
        return self._clock().astimezone(UTC).isoformat(timespec="milliseconds")

    # --- settings ---------------------------------------------------------------

    def _meta(self, key: str) -> str | None:
        rows = self._read("SELECT value FROM meta WHERE key=?", (key,))
        return rows[0][0] if rows else None

    def tiebreaks(self) -> tuple[TieBreak, ...]:
        """The tie-breaks in force, in order."""
        raw = self._meta("tiebreaks")
        return DEFAULT_TIEBREAKS if raw is None else tuple(TieBreak(t) for t in json.loads(raw))

    def set_tiebreaks(self, tiebreaks: Sequence[TieBreak], who: str) -> None:
        """Choose the tie-breaks (audited)."""
        before = [t.value for t in self.tiebreaks()]
        after = [t.value for t in tiebreaks]
        with self._write() as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES ('tiebreaks', ?)", (json.dumps(after),))
            self._audit(db, who, "tiebreaks", "event", json.dumps(before), json.dumps(after))

    def total_rounds(self) -> int | None:
        """The event's announced number of rounds (None: not set)."""
        raw = self._meta("total_rounds")
        return None if raw is None else int(raw)

    def set_total_rounds(self, rounds: int, who: str) -> None:
        """Announce the number of rounds (audited): the Swiss pairing of the final round
        and the TRF export's ``XXR`` read it."""
        if rounds < max(1, len(self.rounds())):
            raise PairingError(f"{rounds} rounds: the event already has {len(self.rounds())}")
        before = self.total_rounds()
        with self._write() as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES ('total_rounds', ?)", (str(rounds),))
            self._audit(db, who, "rounds", "event", None if before is None else str(before),
                        str(rounds))

    # --- players ----------------------------------------------------------------

    def add_players(self, players: Sequence[Player]) -> None:
        """Register ``players`` (all or none); DuplicatePlayerError on a name held."""
        check_unique([*self.players(), *players])
        with self._write() as db:
            (last,) = db.execute("SELECT COALESCE(MAX(registered), 0) FROM players").fetchone()
            db.executemany(
                "INSERT INTO players VALUES (?, ?, ?, ?)",
                [
                    (p.name, p.rating, int(p.withdrawn), last + i)
                    for i, p in enumerate(players, start=1)
                ],
            )

    def add_player(self, name: str, rating: int = 0) -> None:
        self.add_players([Player(name, rating)])

    def import_players_csv(self, text: str) -> list[Player]:
        """Register the players of a CSV text (see arbiter.tournament.players_csv)."""
        players = read_players_csv(text)
        self.add_players(players)
        return players

    def withdraw(self, name: str, who: str) -> None:
        """Take a player out of future pairings (audited); games played still count."""
        with self._write() as db:
            if db.execute("UPDATE players SET withdrawn=1 WHERE name=?", (name,)).rowcount != 1:
                raise UnknownPlayerError(f"no player named {name!r}")
            self._audit(db, who, "withdraw", name, "active", "withdrawn")

    def players(self) -> list[Player]:
        """Every player in registration order."""
        rows = self._read("SELECT name, rating, withdrawn FROM players ORDER BY registered")
        return [Player(n, r, bool(w)) for n, r, w in rows]

    def seeded(self) -> list[Player]:
        """Players by rating, highest first (registration order among equals)."""
        return sorted(self.players(), key=lambda p: -p.rating)

    # --- rounds and pairings ----------------------------------------------------

    def rounds(self) -> list[tuple[int, str]]:
        return [(n, s) for n, s in self._read("SELECT number, system FROM rounds ORDER BY number")]

    def pair_round(self, system: str) -> list[Pairing]:
        """Pair the next round by ``system`` ("swiss" or "round-robin") and store it."""
        number = len(self.rounds()) + 1
        if system == "swiss":
            unfinished = [r for r in self.pairings() if r.result is None and not r.pairing.is_bye]
            if unfinished:
                first = unfinished[0].pairing
                raise PairingError(
                    f"round {first.round} board {first.board} has no result yet: Swiss pairs"
                    " on the scores, so every game must be over first"
                )
            pairings = swiss_round(
                self.seeded(), self.games_for_pairing(), number, self.total_rounds()
            )
        elif system == "round-robin":
            raw = self._meta("round_robin_order")
            order = [p.name for p in self.seeded()] if raw is None else json.loads(raw)
            # Paired first: a refused first round (too few players yet) fixes no order.
            pairings = berger_round(order, number)
            if raw is None:
                with self._write() as db:
                    db.execute(
                        "INSERT INTO meta VALUES ('round_robin_order', ?)", (json.dumps(order),)
                    )
        else:
            raise PairingError(f"unknown pairing system {system!r} (swiss, round-robin)")
        self.add_round(pairings, system)
        return pairings

    def add_round(self, pairings: Sequence[Pairing], system: str = "manual") -> None:
        """Store the next round's ``pairings`` as given."""
        known = {p.name for p in self.players()}
        for p in pairings:
            for name in (p.white, p.black):
                if name is not None and name not in known:
                    raise UnknownPlayerError(f"no player named {name!r}")
        with self._write() as db:
            # Read inside the transaction: two organisers' commands cannot both add round N.
            (number,) = db.execute("SELECT COALESCE(MAX(number), 0) + 1 FROM rounds").fetchone()
            wrong = [p.round for p in pairings if p.round != number]
            if wrong:
                raise PairingError(f"the next round is {number}, not {wrong[0]}")
            db.execute("INSERT INTO rounds VALUES (?, ?, ?)", (number, system, self._now()))
            db.executemany(
                "INSERT INTO pairings (round, board, white, black) VALUES (?, ?, ?, ?)",
                [(p.round, p.board, p.white, p.black) for p in pairings],
            )

    def pair_manual(
        self, games: Sequence[tuple[str, str | None]], who: str
    ) -> list[Pairing]:
        """Store the next round as the organiser paired it by hand (audited): (White, Black)
        per board, Black None for a bye. Every player not withdrawn plays exactly once; the
        Swiss rules are the organiser's to weigh here (used when no legal pairing exists)."""
        number = len(self.rounds()) + 1
        names = [n for pair in games for n in pair if n is not None]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise PairingError(f"round {number}: {', '.join(twice)} paired twice")
        active = {p.name for p in self.players() if not p.withdrawn}
        missing = sorted(active - set(names))
        if missing:
            raise PairingError(f"round {number}: {', '.join(missing)} not paired")
        extra = sorted(set(names) - active)
        if extra:
            raise UnknownPlayerError(f"round {number}: {', '.join(extra)} is not an active player")
        played = [(w, b) for w, b in games if b is not None]
        byes = [(w, b) for w, b in games if b is None]
        pairings = [
            Pairing(number, board, w, b) for board, (w, b) in enumerate([*played, *byes], start=1)
        ]
        self.add_round(pairings, "manual")
        with self._write() as db:
            summary = "; ".join(f"{p.white} - {p.black or '(bye)'}" for p in pairings)
            self._audit(db, who, "pair-manual", f"round {number}", None, summary)
        return pairings

    def import_event(self, players: Sequence[Player], games: Sequence[Game],
                     total_rounds: int) -> None:
        """Load an event read from a TRF file into this ledger, which must be empty: the
        players in start-rank order, each round with its results, the number of rounds."""
        if self._read("SELECT 1 FROM players UNION SELECT 1 FROM rounds LIMIT 1"):
            raise PairingError("the ledger already holds players or rounds: import into a new one")
        with self.batch():
            self._import_event(players, games, total_rounds)

    def _import_event(
        self, players: Sequence[Player], games: Sequence[Game], total_rounds: int
    ) -> None:
        self.add_players([Player(p.name, p.rating) for p in players])
        with self._write() as db:
            for p in players:
                if p.withdrawn:
                    db.execute("UPDATE players SET withdrawn=1 WHERE name=?", (p.name,))
            db.execute("INSERT OR REPLACE INTO meta VALUES ('total_rounds', ?)",
                       (str(total_rounds),))
        for number in sorted({g.pairing.round for g in games}):
            this = [g for g in games if g.pairing.round == number]
            self.add_round([g.pairing for g in this], "swiss")
            with self._write() as db:
                db.executemany(
                    "UPDATE pairings SET result=? WHERE round=? AND board=?",
                    [(g.result.value, number, g.pairing.board) for g in this
                     if g.result is not None],
                )

    def pairings(self, round_number: int | None = None) -> list[PairingRow]:
        """The pairings of one round, or of every round, by round and board."""
        sql = "SELECT round, board, white, black, result, table_name, corrected FROM pairings"
        args: tuple[object, ...] = ()
        if round_number is not None:
            sql += " WHERE round=?"
            args = (round_number,)
        rows = self._read(sql + " ORDER BY round, board", args)
        return [
            PairingRow(Pairing(r, b, w, k), None if res is None else Result(res), t, bool(c))
            for r, b, w, k, res, t, c in rows
        ]

    def games_for_pairing(self) -> list[Game]:
        """Every pairing so far with its result: what Swiss and the standings read."""
        return [row.game for row in self.pairings()]

    def _pairing(self, db: sqlite3.Connection, round_number: int, board: int) -> PairingRow:
        row = db.execute(
            "SELECT round, board, white, black, result, table_name, corrected FROM pairings"
            " WHERE round=? AND board=?",
            (round_number, board),
        ).fetchone()
        if row is None:
            raise UnknownPairingError(f"no board {board} in round {round_number}")
        r, b, w, k, res, t, c = row
        return PairingRow(Pairing(r, b, w, k), None if res is None else Result(res), t, bool(c))

    def assign_table(self, round_number: int, board: int, table: str, who: str) -> dict[str, Any]:
        """Send a pairing to ``table``; returns its retained ``assignment`` payload.

        Moving a pairing from one table to another is a correction (audited).
        """
        with self._write() as db:
            row = self._pairing(db, round_number, board)
            if row.pairing.black is None:
                raise AssignmentError("a bye is not played at a table")
            other = db.execute(
                "SELECT board FROM pairings WHERE round=? AND table_name=? AND board<>?",
                (round_number, table, board),
            ).fetchone()
            if other is not None:
                raise AssignmentError(
                    f"table {table!r} already has board {other[0]} of round {round_number}"
                )
            db.execute(
                "UPDATE pairings SET table_name=? WHERE round=? AND board=?",
                (table, round_number, board),
            )
            if row.table is not None and row.table != table:
                self._audit(db, who, "reassign", f"round {round_number} board {board}",
                            row.table, table)
            # A game already played at the new table may now be this pairing's.
            for (game,) in db.execute(
                "SELECT game FROM games WHERE table_name=? AND round=? AND board=?",
                (table, round_number, board),
            ).fetchall():
                self._derive(db, table, game)
        return assignment_payload(row.pairing)

    def assignments(self, round_number: int) -> dict[str, dict[str, Any]]:
        """Each table's assignment payload for a round."""
        return {
            row.table: assignment_payload(row.pairing)
            for row in self.pairings(round_number)
            if row.table is not None
        }

    def correct_result(
        self, round_number: int, board: int, result: Result | None, who: str
    ) -> None:
        """Set a pairing's result by hand (audited); later table events no longer change it."""
        with self._write() as db:
            row = self._pairing(db, round_number, board)
            db.execute(
                "UPDATE pairings SET result=?, corrected=1 WHERE round=? AND board=?",
                (None if result is None else result.value, round_number, board),
            )
            self._audit(
                db, who, "result", f"round {round_number} board {board}",
                None if row.result is None else row.result.value,
                None if result is None else result.value,
            )

    def standings(self) -> list[Standing]:
        """Standings over every pairing so far, with the tie-breaks in force."""
        return standings(self.seeded(), self.games_for_pairing(), self.tiebreaks())

    # --- audit ------------------------------------------------------------------

    def _audit(
        self, db: sqlite3.Connection, who: str, what: str, target: str,
        before: str | None, after: str | None,
    ) -> None:
        db.execute(
            "INSERT INTO corrections (at, who, what, target, before, after)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (self._now(), who, what, target, before, after),
        )

    def audit(self) -> list[Correction]:
        """Every correction, oldest first."""
        rows = self._read(
            "SELECT id, at, who, what, target, before, after FROM corrections ORDER BY id"
        )
        return [Correction(*row) for row in rows]

    # --- tables and their events ------------------------------------------------

    def record_event(self, table: str, event: Mapping[str, Any]) -> bool:
        """Keep one table event, exactly once; True when new, False for a copy of one held.

        ``table`` is the table named by the topic the event came on.

        :raises TopicMismatchError: the payload names another table.
        :raises MalformedEventError: the payload does not follow the contract.
        :raises ContradictingEventError: another payload is held for this (table, seq).
        Each refusal is logged and noted in the rejections, never stored as an event.
        """
        try:
            seq, game, kind = _check_event(table, event)
        except MalformedEventError as exc:
            self.note_rejection(table, _seq_of(event), str(exc))
            raise
        text = canonical(event)
        with self._write() as db:
            held = db.execute(
                "SELECT payload FROM events WHERE table_name=? AND seq=?", (table, seq)
            ).fetchone()
            if held is None:
                db.execute(
                    "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?)",
                    (table, seq, game, kind, text, self._now()),
                )
                db.execute(
                    "INSERT INTO tables (name, last_seen) VALUES (?, ?)"
                    " ON CONFLICT(name) DO UPDATE SET last_seen=excluded.last_seen",
                    (table, self._now()),
                )
                self._derive(db, table, game)
                return True
        if held[0] == text:
            return False
        reason = f"event {seq} of table {table!r} contradicts the one held"
        self.note_rejection(table, seq, reason)
        raise ContradictingEventError(reason)

    def note_rejection(self, table: str, seq: int | None, reason: str) -> None:
        """Log and keep a note of a refused message (never its payload)."""
        # The payload is not logged: it may hold what a later contract adds.
        log.warning("rejected an event from table %r (seq %s): %s", table, seq, reason)
        with self._write() as db:
            db.execute(
                "INSERT INTO rejections (at, table_name, seq, reason) VALUES (?, ?, ?, ?)",
                (self._now(), table, seq, reason),
            )

    def rejections(self) -> list[tuple[str, str, int | None, str]]:
        """(at, table, seq, reason) of every refused event, oldest first."""
        return [
            (a, t, s, r)
            for a, t, s, r in self._read(
                "SELECT at, table_name, seq, reason FROM rejections ORDER BY id"
            )
        ]

    def _derive(self, db: sqlite3.Connection, table: str, game: str) -> None:
        """Rebuild one game's row (and its pairing's result) from its stored events."""
        row = _derive_game(
            table, game,
            [json.loads(p) for (p,) in db.execute(
                "SELECT payload FROM events WHERE table_name=? AND game=? ORDER BY seq",
                (table, game),
            )],
        )
        scored = False
        if row.round is not None and row.board is not None:
            pairing = db.execute(
                "SELECT white, black, table_name, corrected FROM pairings"
                " WHERE round=? AND board=?",
                (row.round, row.board),
            ).fetchone()
            scored = (
                pairing is not None
                and (pairing[0], pairing[1], pairing[2]) == (row.white, row.black, table)
            )
            if scored and row.result is not None and not pairing[3]:
                db.execute(
                    "UPDATE pairings SET result=? WHERE round=? AND board=?",
                    (row.result.value, row.round, row.board),
                )
        db.execute(
            "INSERT OR REPLACE INTO games VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (table, game, row.round, row.board, row.white, row.black, row.challenges,
             row.lost_w, row.lost_b, row.ending, row.winner,
             None if row.result is None else row.result.value, int(scored)),
        )

    def games(self, table: str | None = None) -> list[GameRow]:
        """Every game seen at a table (or at ``table`` only), by table and game."""
        sql = ("SELECT table_name, game, round, board, white, black, challenges, lost_w, lost_b,"
               " ending, winner, result, scored FROM games")
        args: tuple[object, ...] = ()
        if table is not None:
            sql += " WHERE table_name=?"
            args = (table,)
        rows = self._read(sql + " ORDER BY table_name, game", args)
        out: list[GameRow] = []
        for t, g, rnd, board, white, black, ch, lw, lb, ending, winner, result, scored in rows:
            out.append(GameRow(t, g, rnd, board, white, black, ch, lw, lb, ending, winner,
                               None if result is None else Result(result), bool(scored)))
        return out

    def events(self, table: str) -> list[dict[str, Any]]:
        """A table's events in sequence order."""
        rows = self._read(
            "SELECT payload FROM events WHERE table_name=? ORDER BY seq", (table,)
        )
        return [json.loads(p) for (p,) in rows]

    def tables(self) -> list[str]:
        """Every table heard of."""
        return [n for (n,) in self._read("SELECT name FROM tables ORDER BY name")]

    def last_seq(self, table: str) -> int:
        """The highest sequence number held for ``table`` (0: none)."""
        ((last,),) = self._read(
            "SELECT COALESCE(MAX(seq), 0) FROM events WHERE table_name=?", (table,)
        )
        return int(last)

    def gaps(self, table: str) -> list[tuple[int, int]]:
        """The missing runs (first, last) of ``table``'s sequence numbers below its highest."""
        seqs = [s for (s,) in self._read(
            "SELECT seq FROM events WHERE table_name=? ORDER BY seq", (table,)
        )]
        missing: list[tuple[int, int]] = []
        expected = 1
        for s in seqs:
            if s > expected:
                missing.append((expected, s - 1))
            expected = s + 1
        return missing

    def missing(self, table: str) -> list[tuple[int, int]]:
        """``gaps`` plus the tail: the events after the highest held up to the last one the
        table's retained status says it published (``event_seq``)."""
        ((held, last),) = self._read(
            "SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM events WHERE table_name=?", (table,)
        )
        # Asked after every event of every table: read the sequence numbers only when
        # some are missing below the highest.
        runs = self.gaps(table) if held < last else []
        _online, status, _seen = self.table_state(table)
        published = status.get("event_seq") if status else None
        if isinstance(published, int) and not isinstance(published, bool) and published > last:
            runs.append((last + 1, published))
        return runs

    # --- resend requests to the tables --------------------------------------------

    def ask_resend(self, table: str, ranges: Sequence[tuple[int, int]]) -> ResendAsk:
        """Note a new resend request for ``table``: the next id of that table (above any
        it has been asked before), the runs and the time. Published by the caller."""
        runs = tuple((int(a), int(b)) for a, b in ranges)
        with self._write() as db:
            row = db.execute("SELECT id FROM resends WHERE table_name=?", (table,)).fetchone()
            ask = ResendAsk(table, (row[0] if row else 0) + 1, runs, self._now())
            db.execute(
                "INSERT OR REPLACE INTO resends VALUES (?, ?, ?, ?)",
                (table, ask.id, json.dumps([list(r) for r in runs]), ask.asked_at),
            )
        return ask

    def note_resend_id(self, table: str, request_id: int) -> None:
        """A request id seen on the broker (its retained ``resend``): the next is above it,
        so a new or restored ledger never asks under an id the table has served."""
        with self._write(durable=False) as db:
            db.execute(
                "INSERT INTO resends VALUES (?, ?, '[]', NULL) ON CONFLICT(table_name)"
                " DO UPDATE SET id=excluded.id WHERE excluded.id > resends.id",
                (table, request_id),
            )

    def resends(self) -> dict[str, ResendAsk]:
        """The last resend request of each table asked by this ledger."""
        rows = self._read("SELECT table_name, id, ranges, asked_at FROM resends"
                          " WHERE asked_at IS NOT NULL ORDER BY table_name")
        return {t: ResendAsk(t, i, tuple((a, b) for a, b in json.loads(r)), at)
                for t, i, r, at in rows}

    def set_online(self, table: str, online: bool) -> None:
        """Note a table's retained ``online`` flag."""
        with self._write(durable=False) as db:
            db.execute(
                "INSERT INTO tables (name, online, last_seen) VALUES (?, ?, ?)"
                " ON CONFLICT(name) DO UPDATE SET online=excluded.online,"
                " last_seen=excluded.last_seen",
                (table, int(online), self._now()),
            )

    def set_status(self, table: str, status: Mapping[str, Any]) -> None:
        """Note a table's retained public ``status``."""
        with self._write(durable=False) as db:
            db.execute(
                "INSERT INTO tables (name, status, last_seen) VALUES (?, ?, ?)"
                " ON CONFLICT(name) DO UPDATE SET status=excluded.status,"
                " last_seen=excluded.last_seen",
                (table, canonical(status), self._now()),
            )

    def set_record(self, table: str, game: str, record: Mapping[str, Any]) -> None:
        """Keep the full record a table published for a game that is over."""
        with self._write() as db:
            db.execute(
                "INSERT INTO records VALUES (?, ?, ?, ?) ON CONFLICT(table_name, game)"
                " DO UPDATE SET payload=excluded.payload",
                (table, game, canonical(record), self._now()),
            )

    def record(self, table: str, game: str) -> dict[str, Any] | None:
        """The full record of a game, once its table published it (None before)."""
        rows = self._read(
            "SELECT payload FROM records WHERE table_name=? AND game=?", (table, game)
        )
        return json.loads(rows[0][0]) if rows else None

    def table_state(self, table: str) -> tuple[bool | None, dict[str, Any] | None, str | None]:
        """(online, status, last seen) of a table; None where unknown."""
        rows = self._read("SELECT online, status, last_seen FROM tables WHERE name=?", (table,))
        if not rows:
            return None, None, None
        online, status, seen = rows[0]
        return (None if online is None else bool(online),
                None if status is None else json.loads(status), seen)

    def silent_tables(self, quiet: timedelta) -> list[tuple[str, str]]:
        """(table, why) for each table of the latest round with a game still to finish
        that is offline, or has sent no event for ``quiet``."""
        rounds = self.rounds()
        if not rounds:
            return []
        now = self._clock()
        silent: list[tuple[str, str]] = []
        for row in self.pairings(rounds[-1][0]):
            if row.table is None or row.result is not None:
                continue
            online, _status, _seen = self.table_state(row.table)
            ((last,),) = self._read(
                "SELECT MAX(received_at) FROM events WHERE table_name=?", (row.table,)
            )
            if online is False:
                silent.append((row.table, "offline"))
            elif last is None:
                silent.append((row.table, "no event yet"))
            elif now - datetime.fromisoformat(last) > quiet:
                silent.append((row.table, f"no event since {last}"))
        return silent

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
                fresh = _derive_game(
                    table, game,
                    [json.loads(p) for (p,) in self._db.execute(
                        "SELECT payload FROM events WHERE table_name=? AND game=? ORDER BY seq",
                        (table, game),
                    )],
                )
                got = held.pop((table, game), None)
                if got is None or (got.challenges, got.lost_w, got.lost_b, got.ending,
                                   got.result, got.round, got.board) != (
                        fresh.challenges, fresh.lost_w, fresh.lost_b, fresh.ending,
                        fresh.result, fresh.round, fresh.board):
                    problems.append(f"game {game} of table {table} differs from its events")
            problems += [f"game {g} of table {t} has no events" for t, g in held]
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


def assignment_payload(pairing: Pairing) -> dict[str, Any]:
    """The retained ``assignment`` a table receives for ``pairing``."""
    return {"format": FORMAT, "round": pairing.round, "board": pairing.board,
            "white": pairing.white, "black": pairing.black}


def _seq_of(event: Mapping[str, Any]) -> int | None:
    seq = event.get("seq") if isinstance(event, Mapping) else None
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None


def _check_event(table: str, event: Mapping[str, Any]) -> tuple[int, str, str]:
    """(seq, game, type) of a well-formed event from ``table``."""
    if not isinstance(event, Mapping):
        raise MalformedEventError("an event is a JSON object")
    if event.get("format") != FORMAT:
        raise MalformedEventError(f"format {event.get('format')!r}, not {FORMAT}")
    if event.get("table") != table:
        raise TopicMismatchError(
            f"the payload names table {event.get('table')!r} on table {table!r}'s topic"
        )
    seq = _seq_of(event)
    if seq is None or seq < 1:
        raise MalformedEventError(f"seq {event.get('seq')!r} is not a whole number from 1")
    game = event.get("game")
    if not isinstance(game, (str, int)) or isinstance(game, bool) or game == "":
        raise MalformedEventError(f"game {game!r} is not an id")
    kind = event.get("type")
    if not isinstance(kind, str) or kind not in EVENT_TYPES:
        raise MalformedEventError(f"type {kind!r} is not one of {', '.join(EVENT_TYPES)}")
    if kind == "new_game":
        a = event.get("assignment")
        if a is not None and not (
            isinstance(a, Mapping)
            and all(isinstance(a.get(k), int) and not isinstance(a.get(k), bool)
                    for k in ("round", "board"))
            and all(isinstance(a.get(k), str) for k in ("white", "black"))
        ):
            raise MalformedEventError("assignment is not {round, board, white, black} or null")
    elif kind == "challenge":
        lost = event.get("eliminated")
        if not (isinstance(event.get("number"), int) and isinstance(lost, Mapping)
                and all(isinstance(lost.get(s), int) for s in ("W", "B"))):
            raise MalformedEventError("a challenge needs number and eliminated {W, B}")
    else:
        ending = event.get("ending")
        if not (isinstance(ending, Mapping) and ending.get("kind") in ENDINGS
                and ending.get("winner") in ("W", "B", None)):
            raise MalformedEventError("game_over needs ending {kind, winner}")
    return seq, str(game), kind


def _derive_game(table: str, game: str, events: Sequence[Mapping[str, Any]]) -> GameRow:
    """A game's row from its events (in sequence order)."""
    assignment: Mapping[str, Any] | None = None
    challenges = lost_w = lost_b = 0
    ending: str | None = None
    winner: str | None = None
    for e in events:
        if e["type"] == "new_game":
            assignment = e.get("assignment")
        elif e["type"] == "challenge":
            challenges = max(challenges, int(e["number"]))
            lost_w, lost_b = int(e["eliminated"]["W"]), int(e["eliminated"]["B"])
        elif e["type"] == "game_over":
            ending, winner = e["ending"]["kind"], e["ending"]["winner"]
    result: Result | None = None
    if winner is not None:
        result = Result.from_winner(Colour(winner))
    elif ending == "draw":
        result = Result.DRAW
    a = assignment or {}
    return GameRow(
        table=table, game=game, round=a.get("round"), board=a.get("board"),
        white=a.get("white"), black=a.get("black"), challenges=challenges,
        lost_w=lost_w, lost_b=lost_b, ending=ending, winner=winner, result=result,
        scored=False,
    )
