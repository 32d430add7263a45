"""The ledger's tournament administration: players, rounds and pairings, assignments to
tables, corrections and standings (each change audited where it must be)."""

from __future__ import annotations

import json
import secrets
import sqlite3
from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import cast

from arbiter import wire
from arbiter.hub import event_length
from arbiter.hub.errors import (
    RatingError,
    TableAssignmentError,
    UnknownPairingError,
)
from arbiter.hub.rows import Correction, PairingRow
from arbiter.hub.scoring import score
from arbiter.hub.store import LedgerStore
from arbiter.hub.unplayed import forfeit_text, given_byes
from arbiter.tournament.errors import PairingError, UnknownPlayerError
from arbiter.tournament.model import Game, Pairing, Player, Result, check_unique
from arbiter.tournament.names import check_name
from arbiter.tournament.players_csv import read_players_csv
from arbiter.tournament.roundrobin import berger_round
from arbiter.tournament.standings import DEFAULT_TIEBREAKS, Standing, TieBreak, standings
from arbiter.tournament.swiss.apart import swiss_round_apart

SYSTEMS = ("swiss", "round-robin", "manual")
#: Highest rating a player may have (Elo-like ratings stay well below it).
MAX_RATING = 9_999


class Administration:
    """The organiser's side of the ledger, in ``store`` (``Ledger.admin``)."""

    def __init__(self, store: LedgerStore) -> None:
        self.store = store

    # --- audit ------------------------------------------------------------------

    def _audit(
        self, db: sqlite3.Connection, who: str, what: str, target: str,
        before: str | None, after: str | None,
    ) -> None:
        self.store.audit(db, who, what, target, before, after)

    def audit(self) -> list[Correction]:
        """Every correction, oldest first."""
        rows = self.store.read(
            "SELECT id, at, who, what, target, before, after FROM corrections ORDER BY id"
        )
        return [Correction(*row) for row in rows]

    # --- settings ---------------------------------------------------------------

    def tiebreaks(self) -> tuple[TieBreak, ...]:
        """The tie-breaks in force, in order."""
        raw = self.store.meta("tiebreaks")
        return DEFAULT_TIEBREAKS if raw is None else tuple(TieBreak(t) for t in json.loads(raw))

    def set_tiebreaks(self, tiebreaks: Sequence[TieBreak], who: str) -> None:
        """Choose the tie-breaks (audited)."""
        before = [t.value for t in self.tiebreaks()]
        after = [t.value for t in tiebreaks]
        with self.store.write() as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES ('tiebreaks', ?)", (json.dumps(after),))
            self._audit(db, who, "tiebreaks", "event", json.dumps(before), json.dumps(after))

    def total_rounds(self) -> int | None:
        """The event's announced number of rounds (None: not set; see event_length)."""
        return event_length.announced(self.store)

    def set_total_rounds(self, rounds: int, who: str) -> None:
        """Announce, or extend, the event's number of rounds (audited): no round is paired
        past it, and the final round's Swiss pairing and the TRF's ``XXR`` read it."""
        with self.store.write() as db:
            before = event_length.announce(db, rounds)
            self._audit(db, who, "rounds", "event", None if before is None else str(before),
                        str(rounds))

    # --- players ----------------------------------------------------------------

    def add_players(self, players: Sequence[Player]) -> None:
        """Register ``players`` (all or none), their names as the one rule of names.py
        keeps them (PlayerNameError otherwise); DuplicatePlayerError on a name held."""
        players = [replace(p, name=check_name(p.name)) for p in players]
        for p in players:
            if isinstance(p.rating, bool) or not isinstance(p.rating, int) or not (
                    0 <= p.rating <= MAX_RATING):
                raise RatingError(f"{p.name}: a rating is a whole number from 0 to"
                                  f" {MAX_RATING}, not {p.rating!r}")
        check_unique([*self.players(), *players])
        with self.store.write() as db:
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
        """Take a player out of future pairings (audited); games played still count, byes
        given for rounds not yet paired go (a withdrawn player scores nothing more)."""
        with self.store.write() as db:
            if db.execute("UPDATE players SET withdrawn=1 WHERE name=?", (name,)).rowcount != 1:
                raise UnknownPlayerError(f"no player named {name!r}")
            db.execute("DELETE FROM byes WHERE player=? AND round >"
                       " (SELECT COALESCE(MAX(number), 0) FROM rounds)", (name,))
            self._audit(db, who, "withdraw", name, "active", "withdrawn")

    def players(self) -> list[Player]:
        """Every player in registration order."""
        rows = self.store.read("SELECT name, rating, withdrawn FROM players ORDER BY registered")
        return [Player(n, r, bool(w)) for n, r, w in rows]

    def seeded(self) -> list[Player]:
        """Players by rating, highest first (registration order among equals)."""
        return sorted(self.players(), key=lambda p: -p.rating)

    # --- rounds and pairings ----------------------------------------------------

    def rounds(self) -> list[tuple[int, str]]:
        rows = self.store.read("SELECT number, system FROM rounds ORDER BY number")
        return [(n, s) for n, s in rows]

    def pair_round(self, system: str) -> list[Pairing]:
        """Pair the next round by ``system`` ("swiss" or "round-robin") and store it."""
        number = len(self.rounds()) + 1
        event_length.check_next(self.store, number)  # before a long Swiss pairing
        if system == "swiss":
            unfinished = [r for r in self.pairings() if not r.game.complete]
            if unfinished:
                first = unfinished[0].pairing
                raise PairingError(
                    f"round {first.round} board {first.board} has no result yet: Swiss pairs"
                    " on the scores, so every game must be over first"
                )
            # In the pairing process: a big event's pairing never holds the pages.
            pairings = swiss_round_apart(
                self.seeded(), self.games_for_pairing(), number, self.total_rounds()
            )
        elif system == "round-robin":
            if any(g.pairing.round == number for g in given_byes(self.store)):
                raise PairingError(f"round {number} has byes requested: a round-robin pairs"
                                   " everyone (record the absent player's game as a forfeit)")
            raw = self.store.meta("round_robin_order")
            order = [p.name for p in self.seeded()] if raw is None else json.loads(raw)
            # Paired first: a refused first round (too few players yet) fixes no order.
            pairings = berger_round(order, number)
            if raw is None:
                with self.store.write() as db:
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
        with self.store.write() as db:
            # Read inside the transaction: two organisers' commands cannot both add round N.
            (number,) = db.execute("SELECT COALESCE(MAX(number), 0) + 1 FROM rounds").fetchone()
            event_length.check_next(db, number)
            wrong = [p.round for p in pairings if p.round != number]
            if wrong:
                raise PairingError(f"the next round is {number}, not {wrong[0]}")
            db.execute("INSERT INTO rounds VALUES (?, ?, ?)", (number, system, self.store.now()))
            # Each pairing's id: 128 random bits no other ledger or earlier pairing makes.
            db.executemany(
                "INSERT INTO pairings (round, board, white, black, pairing_id)"
                " VALUES (?, ?, ?, ?, ?)",
                [(p.round, p.board, p.white, p.black, secrets.token_hex(16))
                 for p in pairings],
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
        away = {g.pairing.white for g in given_byes(self.store) if g.pairing.round == number}
        active = {p.name for p in self.players() if not p.withdrawn and p.name not in away}
        missing = sorted(active - set(names))
        if missing:
            raise PairingError(f"round {number}: {', '.join(missing)} not paired")
        given = sorted(set(names) & away)
        if given:
            raise PairingError(f"round {number}: {', '.join(given)} has a bye given for it")
        extra = sorted(set(names) - active)
        if extra:
            raise UnknownPlayerError(f"round {number}: {', '.join(extra)} is not an active player")
        played = [(w, b) for w, b in games if b is not None]
        byes = [(w, b) for w, b in games if b is None]
        pairings = [
            Pairing(number, board, w, b) for board, (w, b) in enumerate([*played, *byes], start=1)
        ]
        self.add_round(pairings, "manual")
        with self.store.write() as db:
            summary = "; ".join(f"{p.white} - {p.black or '(bye)'}" for p in pairings)
            self._audit(db, who, "pair-manual", f"round {number}", None, summary)
        return pairings

    def pairings(
        self, round_number: int | None = None, *, tables: Collection[str] | None = None
    ) -> list[PairingRow]:
        """The pairings of one round, or of every round, by round and board; with
        ``tables``, only those assigned to one of them."""
        sql = ("SELECT round, board, white, black, result, table_name, corrected, pairing_id,"
               " forfeit FROM pairings")
        args: tuple[object, ...] = ()
        if round_number is not None and not _fits(round_number):
            return []  # no round has such a number (and SQLite could not hold it)
        where = []
        if round_number is not None:
            where.append("round=?")
            args = (round_number,)
        wanted = None if tables is None else set(tables)
        if wanted is not None and len(wanted) <= _MAX_NAMES:
            # The live feed asks for the few tables that changed, many times a second.
            where.append(f"table_name IN ({','.join('?' * len(wanted))})")
            args += tuple(sorted(wanted))
        if where:
            sql += " WHERE " + " AND ".join(where)
        rows = self.store.read(sql + " ORDER BY round, board", args)
        if wanted is not None and len(wanted) > _MAX_NAMES:
            rows = [r for r in rows if r[5] in wanted]
        return [_row(row) for row in rows]

    def games_for_pairing(self) -> list[Game]:
        """Every pairing so far with its result, and the byes given (for rounds paired or
        to come): what Swiss, the standings and the TRF export read."""
        return [*(row.game for row in self.pairings()), *given_byes(self.store)]

    def pairing_in(self, db: sqlite3.Connection, round_number: int, board: int) -> PairingRow:
        """A board's pairing, read in the caller's write ``db``; UnknownPairingError if none."""
        if not (_fits(round_number) and _fits(board)):
            raise UnknownPairingError(f"no board {board} in round {round_number}")
        row = db.execute(
            "SELECT round, board, white, black, result, table_name, corrected, pairing_id,"
            " forfeit FROM pairings WHERE round=? AND board=?",
            (round_number, board),
        ).fetchone()
        if row is None:
            raise UnknownPairingError(f"no board {board} in round {round_number}")
        return _row(row)

    def assign_table(
        self, round_number: int, board: int, table: str, who: str
    ) -> wire.AssignmentMessage:
        """Send a pairing to ``table``; returns its retained ``assignment`` payload.

        Moving a pairing from one table to another is a correction (audited).
        """
        with self.store.write() as db:
            row = self.pairing_in(db, round_number, board)
            if row.pairing.black is None:
                raise TableAssignmentError("a bye is not played at a table")
            if row.forfeit:
                raise TableAssignmentError("a forfeited game is not played at a table")
            other = db.execute(
                "SELECT board FROM pairings WHERE round=? AND table_name=? AND board<>?",
                (round_number, table, board),
            ).fetchone()
            if other is not None:
                raise TableAssignmentError(
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
            score(db, round_number, board)
        return assignment_payload(row.pairing, row.pairing_id)

    def assignments(self, round_number: int) -> dict[str, wire.AssignmentMessage]:
        """Each table's assignment payload for a round."""
        return {
            row.table: assignment_payload(row.pairing, row.pairing_id)
            for row in self.pairings(round_number)
            if row.table is not None
        }

    def correct_result(
        self, round_number: int, board: int, result: Result | None, who: str
    ) -> None:
        """Set a pairing's result by hand (audited); later table events no longer change it.
        Setting the result it already has does nothing."""
        with self.store.write() as db:
            row = self.pairing_in(db, round_number, board)
            if row.result == result and not row.forfeit:
                return  # nothing to correct: no audit, and table events still count
            db.execute(
                "UPDATE pairings SET result=?, corrected=1, forfeit=0 WHERE round=? AND board=?",
                (None if result is None else result.value, round_number, board),
            )
            self._audit(
                db, who, "result", f"round {round_number} board {board}",
                forfeit_text(row.result) if row.forfeit else (
                    None if row.result is None else row.result.value),
                None if result is None else result.value,
            )

    def standings(self) -> list[Standing]:
        """Standings over every pairing so far, with the tie-breaks in force (a bye given
        for a round not yet paired counts from that round's pairing on)."""
        paired = len(self.rounds())
        games = [g for g in self.games_for_pairing() if g.pairing.round <= paired]
        return standings(self.seeded(), games, self.tiebreaks())


def assignment_payload(
    pairing: Pairing, pairing_id: str | None = None
) -> wire.AssignmentMessage:
    """The retained ``assignment`` a table receives for ``pairing`` (with its id)."""
    if pairing.black is None:
        raise TableAssignmentError("a bye is not played at a table")
    return wire.assignment_message(
        wire.assignment(pairing.round, pairing.board, pairing.white, pairing.black,
                        pairing_id))


def _row(row: Sequence[object]) -> PairingRow:
    """A PairingRow from a pairings row (round, board, white, black, result, table,
    corrected, pairing id, forfeit)."""
    r, b, w, k, res, t, c, i, f = row
    return PairingRow(Pairing(cast(int, r), cast(int, b), cast(str, w), cast("str | None", k)),
                      None if res is None else Result(res), cast("str | None", t), bool(c),
                      cast("str | None", i), bool(f))


#: Most table names put in one query's IN list (SQLite's limit on parameters is far above).
_MAX_NAMES = 500


def _fits(number: int) -> bool:
    """A number a round or board can be (and SQLite can hold)."""
    return 0 <= number <= wire.MAX_INT
