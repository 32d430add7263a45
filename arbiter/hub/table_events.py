"""The ledger's table events: each kept exactly once, the games they describe and the
result each board gets, gaps, refused messages and resend requests.

Results come from the tables: a ``game_over`` event ends the game, and the
pairing gets its result only when the table's ``new_game`` for that game
carried the assignment of that very pairing (same round, board, players, the
pairing assigned to that table, and the pairing's random id, so no game of an
earlier run or another ledger counts). A game at an unassigned table is kept
but not scored, as are a table's games past its limit a round
(:data:`arbiter.hub.scoring.MAX_GAMES_PER_ROUND`). An organiser's correction wins
over later events.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Mapping, Sequence

from arbiter import wire
from arbiter.hub.errors import ContradictingEventError
from arbiter.hub.rows import GameRow, ResendAsk
from arbiter.hub.scoring import derive, fold_challenge, stored_event
from arbiter.hub.store import LedgerStore
from arbiter.logthrottle import LogThrottle
from arbiter.tournament.model import Result
from arbiter.wire.errors import WireFormatError

log = logging.getLogger(__name__)

#: Refused messages whose note is kept, per table (the latest; older ones are counted).
REJECTIONS_KEPT = 200
#: Most games not scored listed to the organiser (a table's flood is summed up instead:
#: :meth:`TableEvents.over_limit`).
UNSCORED_LISTED = 200


class TableEvents:
    """Table events in, games and results derived, in ``store`` (``Ledger.events``)."""

    def __init__(self, store: LedgerStore) -> None:
        self.store = store
        # Refusals are logged by the one rule for what comes from outside.
        self._log = LogThrottle()

    # --- tables and their events ------------------------------------------------

    def record(self, table: str, event: Mapping[str, object], *, note: bool = True) -> bool:
        """Keep one table event, exactly once; True when new, False for a copy of one held.

        ``table`` is the table named by the topic the event came on. The event is checked
        against the wire format (:func:`arbiter.wire.check_event`) and kept as it returns
        it: its known fields only.

        :raises TopicMismatchError: the payload names another table.
        :raises WireFormatError: the payload does not follow the contract.
        :raises ContradictingEventError: another payload is held for this (table, seq).
        Each refusal is logged and noted in the rejections (with ``note``: a second copy
        of a message already seen is refused without), never stored as an event.
        """
        try:
            checked = wire.check_event(event, table)
        except WireFormatError as exc:
            if note:
                self.note_rejection(table, exc.seq, str(exc))
            raise
        seq, game, kind = checked["seq"], str(checked["game"]), checked["type"]
        text = wire.canonical(checked)
        with self.store.write() as db:
            now = self.store.now()
            new = db.execute(
                "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (table, seq, game, kind, text, now),
            ).rowcount == 1
            if new:
                db.execute(
                    "INSERT INTO tables (name, last_seen) VALUES (?, ?)"
                    " ON CONFLICT(name) DO UPDATE SET last_seen=excluded.last_seen",
                    (table, now),
                )
                if not (kind == "challenge" and fold_challenge(db, table, checked)):
                    derive(db, table, game)
                return True
            held = db.execute(
                "SELECT payload FROM events WHERE table_name=? AND seq=?", (table, seq)
            ).fetchone()
        if held[0] == text:
            return False
        reason = f"event {seq} of table {table!r} contradicts the one held"
        if note:
            self.note_rejection(table, seq, reason)
        raise ContradictingEventError(reason)

    def note_rejection(self, table: str, seq: int | None, reason: str) -> None:
        """Log and keep a note of a refused message (never its payload).

        A table's latest :data:`REJECTIONS_KEPT` notes are kept, and the count of all
        (:meth:`refused`): a table flooding the hub with bad messages fills neither its
        disk, nor the organiser's page, nor the log (:mod:`arbiter.logthrottle`: a table's
        first ones are logged, then one in many, and a few lines a minute in all)."""
        with self.store.write() as db:
            (total,) = db.execute(
                "INSERT INTO refused VALUES (?, 1) ON CONFLICT(table_name)"
                " DO UPDATE SET total=total+1 RETURNING total", (table,)).fetchone()
            db.execute(
                "INSERT INTO rejections (at, table_name, seq, reason) VALUES (?, ?, ?, ?)",
                (self.store.now(), table, seq, reason),
            )
            if total > REJECTIONS_KEPT:
                db.execute(
                    "DELETE FROM rejections WHERE table_name=? AND id <= (SELECT id FROM"
                    " rejections WHERE table_name=? ORDER BY id DESC LIMIT 1 OFFSET ?)",
                    (table, table, REJECTIONS_KEPT))
        # The payload is not logged: it may hold what a later contract adds.
        line = self._log.note_total(total)
        if line is not None:
            log.warning("rejected a message from table %r (seq %s): %s (%d refused from"
                        " this table so far, %d lines held back)", table, seq, reason, *line)

    def rejections(self) -> list[tuple[str, str, int | None, str]]:
        """(at, table, seq, reason) of the refused messages kept, oldest first."""
        return [
            (a, t, s, r)
            for a, t, s, r in self.store.read(
                "SELECT at, table_name, seq, reason FROM rejections ORDER BY id"
            )
        ]

    def refused(self) -> dict[str, int]:
        """How many messages each table has had refused, in all (kept or not)."""
        return dict(self.store.read("SELECT table_name, total FROM refused ORDER BY table_name"))

    def games(self, table: str | None = None, *, scored_only: bool = False) -> list[GameRow]:
        """Every game seen at a table (or at ``table`` only; with ``scored_only`` the games
        that count only), by table and game."""
        where, args = [], []
        if table is not None:
            where.append("table_name=?")
            args.append(table)
        if scored_only:
            where.append("scored=1")
        return self._game_rows(("WHERE " + " AND ".join(where) if where else "")
                               + " ORDER BY table_name, game", args)

    def latest(self, table: str) -> GameRow | None:
        """A table's latest game: the one started last (its first event has the highest
        seq) of those within its limit (:meth:`over_limit`: a flood is the organiser's to
        see, not the venue's); one indexed read however many games the table opened."""
        rows = self._game_rows("WHERE table_name=? AND over_limit=0"
                               " ORDER BY started_seq DESC LIMIT 1", [table])
        return rows[0] if rows else None

    def _game_rows(self, tail: str, args: Sequence[object]) -> list[GameRow]:
        rows = self.store.read(
            "SELECT table_name, game, round, board, white, black, challenges, lost_w, lost_b,"
            " ending, winner, result, scored, over_limit FROM games " + tail, args)
        return [GameRow(t, g, rnd, board, white, black, ch, lw, lb, ending, winner,
                        None if result is None else Result(result), bool(scored), bool(over))
                for t, g, rnd, board, white, black, ch, lw, lb, ending, winner, result, scored,
                over in rows]

    def begun_after(self, table: str, game: str) -> bool:
        """True when ``table`` began a game after ``game``: one started later (a higher
        first seq) with a challenge played, or ended other than abandoned. Until then an
        abandoned game's record is not shown (issue 27: players may go on with it after a
        mistaken NEW GAME), whatever a table of an older version published."""
        rows = self.store.read(
            "SELECT 1 FROM games g JOIN games a ON a.table_name=g.table_name AND a.game=?"
            " WHERE g.table_name=? AND g.started_seq > a.started_seq AND (g.challenges > 0"
            " OR (g.ending IS NOT NULL AND g.ending <> 'abandoned')) LIMIT 1", (game, table))
        return bool(rows)

    def over_limit(self) -> list[tuple[str, int | None, int]]:
        """(table, round, games kept but not scored) of each table that opened more than
        :data:`arbiter.hub.scoring.MAX_GAMES_PER_ROUND` games under one round (None: under
        no round this ledger paired)."""
        return [(t, r, n) for t, r, n in self.store.read(
            "SELECT table_name, limit_round, COUNT(*) FROM games WHERE over_limit=1"
            " GROUP BY table_name, limit_round ORDER BY table_name, limit_round")]

    def of_table(self, table: str) -> list[wire.Event]:
        """A table's events in sequence order."""
        rows = self.store.read(
            "SELECT payload FROM events WHERE table_name=? ORDER BY seq", (table,)
        )
        return [stored_event(p) for (p,) in rows]

    def last_seq(self, table: str) -> int:
        """The highest sequence number held for ``table`` (0: none)."""
        ((last,),) = self.store.read(
            "SELECT COALESCE(MAX(seq), 0) FROM events WHERE table_name=?", (table,)
        )
        return int(last)

    def gaps(self, table: str) -> list[tuple[int, int]]:
        """The missing runs (first, last) of ``table``'s sequence numbers below its highest."""
        seqs = [s for (s,) in self.store.read(
            "SELECT seq FROM events WHERE table_name=? ORDER BY seq", (table,)
        )]
        missing: list[tuple[int, int]] = []
        expected = 1
        for s in seqs:
            if s > expected:
                missing.append((expected, s - 1))
            expected = s + 1
        return missing

    # --- resend requests to the tables --------------------------------------------

    def ask_resend(self, table: str, ranges: Sequence[tuple[int, int]],
                   records: Sequence[str] = ()) -> ResendAsk:
        """Note a new resend request for ``table``: a new random id, the runs, the games
        whose records it lacks, and the time. Published by the caller. The id is random
        (53 bits, none like the table's last), so no other ledger, a fresh one of the same
        event included, asks under an id the table has served already: a table serves each
        id once (issue 27). Only the first :data:`arbiter.wire.MAX_RANGES` runs and
        :data:`arbiter.wire.MAX_RECORDS` records are asked for: a request naming more is
        not the wire format, and the table would ignore it."""
        runs = tuple((int(a), int(b)) for a, b in ranges)[:wire.MAX_RANGES]
        games = tuple(str(g) for g in records)[:wire.MAX_RECORDS]
        with self.store.write() as db:
            row = db.execute("SELECT id FROM resends WHERE table_name=?", (table,)).fetchone()
            request_id = row[0] if row else 0
            while request_id in (0, row[0] if row else 0):
                request_id = secrets.randbelow(wire.MAX_INT) + 1
            ask = ResendAsk(table, request_id, runs, self.store.now(), games)
            db.execute(
                "INSERT OR REPLACE INTO resends (table_name, id, ranges, asked_at, records)"
                " VALUES (?, ?, ?, ?, ?)",
                (table, ask.id, json.dumps([list(r) for r in runs]), ask.asked_at,
                 json.dumps(list(games))),
            )
        return ask

    def resends(self) -> dict[str, ResendAsk]:
        """The last resend request of each table asked by this ledger."""
        rows = self.store.read("SELECT table_name, id, ranges, asked_at, records FROM resends"
                          " WHERE asked_at IS NOT NULL ORDER BY table_name")
        return {t: ResendAsk(t, i, tuple((a, b) for a, b in json.loads(r)), at,
                             tuple(json.loads(games)))
                for t, i, r, at, games in rows}

    def unscored_games(self) -> list[tuple[str, str, str]]:
        """(table, game, why) of each game played that does not count, for the organiser
        (the first :data:`UNSCORED_LISTED`): one started under a board's round and players
        but not under its pairing (no pairing id, or another's: an earlier run of the
        event or another ledger's), one played again under an assignment whose board
        another game counts for, and one played at a table of the latest round without
        NEW GAME after its assignment (its events came after the round was paired, its
        new game carried no pairing of that table). Abandoned games are left out: nothing
        was decided in them; so are a table's games past its limit (:meth:`over_limit`).
        Each query reads through an index, at most the limit's games per board."""
        out: list[tuple[str, str, str]] = []
        under = self.store.read(
            "SELECT g.table_name, g.game, p.round, p.board, p.pairing_id IS NOT NULL"
            " AND g.pairing_id IS NOT p.pairing_id, (SELECT s.game FROM games s"
            " WHERE s.table_name=p.table_name AND s.round=p.round AND s.board=p.board"
            " AND s.scored=1) FROM pairings p JOIN games g ON g.table_name=p.table_name"
            " AND g.limit_round=p.round AND g.over_limit=0 AND g.round=p.round"
            " AND g.board=p.board AND g.scored=0 WHERE g.ending IS NOT 'abandoned'"
            " ORDER BY g.table_name, g.started_seq LIMIT ?", (UNSCORED_LISTED,))
        for table, game, rnd, board, foreign, counted in under:
            if foreign:
                out.append((table, game, f"not started under round {rnd} board {board}'s"
                                         " pairing (from before it was paired: an earlier run"
                                         " of the event, or another hub's)"))
            elif counted is not None:
                out.append((table, game, f"played again under round {rnd} board {board}'s"
                                         f" assignment (game {counted} counts)"))
        rounds = self.store.read(
            "SELECT number, created_at FROM rounds ORDER BY number DESC LIMIT 1")
        if rounds and len(out) < UNSCORED_LISTED:
            number, paired_at = rounds[0]
            loose = self.store.read(
                "SELECT g.table_name, g.game, p.board FROM games g JOIN pairings p"
                " ON p.table_name=g.table_name AND p.round=?"
                " WHERE g.scored=0 AND g.round IS NOT p.round AND g.ending IS NOT 'abandoned'"
                " AND g.over_limit=0 AND EXISTS (SELECT 1 FROM events e"
                " WHERE e.table_name=g.table_name AND e.game=g.game AND e.type<>'new_game'"
                " AND e.received_at > ?) ORDER BY g.table_name, g.started_seq LIMIT ?",
                (number, paired_at, UNSCORED_LISTED - len(out)))
            for table, game, board in loose:
                out.append((table, game, f"played without NEW GAME after round {number} board"
                                         f" {board} was assigned"))
        return out
