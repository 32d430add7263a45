"""The ledger's unplayed rounds: forfeits, the byes the organiser gives, and events begun
elsewhere (a TRF file with forfeits, byes, withdrawn and late players, absent rounds).

Where each is kept:

* a forfeit: on its pairing (``pairings.forfeit``), the result giving the point to the
  side who came (TRF ``+``/``-``); no result, neither came (both lose: ``-``/``-``);
* a bye the organiser gives (full ``F``, half ``H``, zero ``Z`` points): in ``byes`` by
  round and player, for a round paired or still to come; the Swiss pairing of that round
  leaves the player out (:func:`arbiter.tournament.swiss.swiss_round`);
* the pairing-allocated bye (``U``): a pairing without Black, as the pairing made it;
* a round a player was not paired in (absent, withdrawn, entered late): nothing.

Each organiser's action here is audited in the ledger's corrections, as the others are.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING

from arbiter.hub import event_length
from arbiter.hub.errors import UnplayedRoundError
from arbiter.hub.store import LedgerStore
from arbiter.tournament.errors import PairingError, UnknownPlayerError
from arbiter.tournament.model import Bye, Colour, Game, Pairing, Player, Result

if TYPE_CHECKING:  # the administration reads given_byes from here
    from arbiter.hub.administration import Administration

#: The audit trail's words for a forfeit, by the result kept (None: neither came).
_FORFEIT_TEXT = {Result.WHITE_WIN: "+/-", Result.BLACK_WIN: "-/+", None: "-/-"}
#: Who came to a forfeited board, by the word the command line, the forms and the API
#: use (None: neither came).
FORFEIT_SIDES: dict[str, Colour | None] = {"white": Colour.WHITE, "black": Colour.BLACK,
                                           "none": None}
#: A bye the organiser gives, by its points as the command line, the forms and the API
#: write them.
BYE_POINTS = {"0.5": Bye.HALF, "0": Bye.ZERO, "1": Bye.FULL}


def forfeit_label(result: Result | None) -> str:
    """A forfeited board's result as the pages show it."""
    if result is Result.WHITE_WIN:
        return "1-0 forfeit"
    if result is Result.BLACK_WIN:
        return "0-1 forfeit"
    return "0-0 forfeit (neither came)"


def forfeit_text(result: Result | None) -> str:
    """A forfeit as the audit trail writes it: White's code, then Black's (TRF's ``+``
    won by forfeit, ``-`` lost by it)."""
    return _FORFEIT_TEXT.get(result, "-/-")


def given_byes(store: LedgerStore) -> list[Game]:
    """The byes the organiser gave, by round then registration order: each a pairing
    without Black (board 0: it is played at no board) of the bye's kind."""
    rows = store.read(
        "SELECT b.round, b.player, b.kind FROM byes b JOIN players p ON p.name=b.player"
        " ORDER BY b.round, p.registered")
    return [Game(Pairing(r, 0, name, None), bye=Bye(kind)) for r, name, kind in rows]


class Unplayed:
    """Forfeits, given byes and TRF import, in ``store`` (``Ledger.unplayed``); ``admin``
    for the players, the rounds and their pairings."""

    def __init__(self, store: LedgerStore, admin: Administration) -> None:
        self.store = store
        self.admin = admin

    # --- forfeits ---------------------------------------------------------------

    def forfeit(self, round_number: int, board: int, came: Colour | None, who: str) -> None:
        """Record that a board's game was not played (audited): ``came`` the side who came
        and wins by forfeit, None when neither came. The result is the organiser's from
        then on: a table's later events no longer change it (as a correction)."""
        result = None if came is None else Result.from_winner(came)
        with self.store.write() as db:
            row = self.admin.pairing_in(db, round_number, board)
            if row.pairing.black is None:
                raise UnplayedRoundError(
                    f"round {round_number} board {board} is a bye: no game to forfeit")
            if row.forfeit and row.result == result:
                return  # already so: nothing to audit
            db.execute(
                "UPDATE pairings SET result=?, corrected=1, forfeit=1 WHERE round=? AND board=?",
                (None if result is None else result.value, round_number, board))
            before = forfeit_text(row.result) if row.forfeit else (
                None if row.result is None else row.result.value)
            self.store.audit(db, who, "forfeit", f"round {round_number} board {board}",
                             before, forfeit_text(result))

    # --- byes given by the organiser ----------------------------------------------

    def request_bye(self, name: str, round_number: int, who: str, kind: Bye = Bye.HALF) -> None:
        """Give ``name`` a bye of ``kind`` (half a point unless asked otherwise) for a round
        not yet paired (audited): that round's pairing leaves the player out."""
        if kind is Bye.PAIRING:
            raise UnplayedRoundError("the pairing-allocated bye is the pairing's to give")
        with self.store.write() as db:
            self._check_coming(db, name, round_number)
            withdrawn = db.execute("SELECT withdrawn FROM players WHERE name=?",
                                   (name,)).fetchone()[0]
            if withdrawn:
                raise UnplayedRoundError(f"{name} has withdrawn: no bye to give")
            held = db.execute("SELECT kind FROM byes WHERE round=? AND player=?",
                              (round_number, name)).fetchone()
            if held is not None:
                raise UnplayedRoundError(
                    f"{name} already has a bye ({held[0]}) for round {round_number}")
            db.execute("INSERT INTO byes VALUES (?, ?, ?)", (round_number, name, kind.value))
            self.store.audit(db, who, "bye", f"{name} round {round_number}", None, kind.value)

    def cancel_bye(self, name: str, round_number: int, who: str) -> None:
        """Take back the bye ``name`` was given for a round not yet paired (audited)."""
        with self.store.write() as db:
            self._check_coming(db, name, round_number)
            held = db.execute("SELECT kind FROM byes WHERE round=? AND player=?",
                              (round_number, name)).fetchone()
            if held is None:
                raise UnplayedRoundError(f"{name} has no bye for round {round_number}")
            db.execute("DELETE FROM byes WHERE round=? AND player=?", (round_number, name))
            self.store.audit(db, who, "bye", f"{name} round {round_number}", held[0], None)

    def byes(self, round_number: int | None = None) -> list[Game]:
        """The byes given (of one round, or of every round)."""
        return [g for g in given_byes(self.store)
                if round_number is None or g.pairing.round == round_number]

    def _check_coming(self, db: sqlite3.Connection, name: str, round_number: int) -> None:
        if db.execute("SELECT 1 FROM players WHERE name=?", (name,)).fetchone() is None:
            raise UnknownPlayerError(f"no player named {name!r}")
        (paired,) = db.execute("SELECT COALESCE(MAX(number), 0) FROM rounds").fetchone()
        if round_number <= paired:
            raise UnplayedRoundError(
                f"round {round_number} is paired already: a bye is given before the pairing"
                " (record the game as a forfeit instead)")
        total = self.admin.total_rounds()
        if total is not None and round_number > total:
            raise UnplayedRoundError(f"round {round_number}: the event has {total} rounds")

    # --- an event begun elsewhere -------------------------------------------------

    def import_event(self, players: Sequence[Player], games: Sequence[Game],
                     total_rounds: int | None) -> None:
        """Load an event read from a TRF file into this ledger, which must be empty: the
        players in start-rank order (withdrawn ones marked), each round with its results
        and forfeits, the byes given (for the rounds played and the next), the number of
        rounds (None: the file did not say). A round a player was not paired in stays
        without a row."""
        if self.store.read("SELECT 1 FROM players UNION SELECT 1 FROM rounds LIMIT 1"):
            raise PairingError("the ledger already holds players or rounds: import into a new one")
        with self.store.batch():
            self._import_event(players, games, total_rounds)

    def _import_event(
        self, players: Sequence[Player], games: Sequence[Game], total_rounds: int | None
    ) -> None:
        self.admin.add_players([Player(p.name, p.rating) for p in players])
        given = [g for g in games if g.pairing.is_bye and g.bye is not Bye.PAIRING]
        with self.store.write() as db:
            db.executemany("UPDATE players SET withdrawn=1 WHERE name=?",
                           [(p.name,) for p in players if p.withdrawn])
            if total_rounds is not None:  # None: the file did not say; the organiser sets it
                event_length.announce(db, total_rounds)  # refuses an impossible length
            db.executemany("INSERT INTO byes VALUES (?, ?, ?)",
                           [(g.pairing.round, g.pairing.white, g.bye.value) for g in given])
        kept_apart = set(given)
        paired = [g for g in games if g not in kept_apart]
        for number in sorted({g.pairing.round for g in paired}):
            this = [g for g in paired if g.pairing.round == number]
            # Boards in the file's order, the pairing-allocated bye after the games.
            this.sort(key=lambda g: (g.pairing.is_bye, g.pairing.board))
            self.admin.add_round(
                [Pairing(number, board, g.pairing.white, g.pairing.black)
                 for board, g in enumerate(this, start=1)], "swiss")
            with self.store.write() as db:
                db.executemany(
                    "UPDATE pairings SET result=?, forfeit=? WHERE round=? AND board=?",
                    [(None if g.result is None else g.result.value, int(g.forfeit), number,
                      board) for board, g in enumerate(this, start=1)
                     if g.result is not None or g.forfeit],
                )
