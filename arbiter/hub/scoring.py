"""How table events become games and boards get results: the rules the ledger's parts
share (the events' part derives as events come, the administration scores a board when a
table is assigned, the archive re-derives to check and to import).

Each function takes the connection of the open write (or the locked writer) and keeps to
it: none opens a transaction of its own.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import cast

from arbiter import wire
from arbiter.hub.rows import GameRow
from arbiter.tournament.model import Colour, Result

#: Most games a table may open under one round (the round its NEW GAME names if this
#: ledger has paired it; else under none, however many rounds the games name): a board
#: needs one game, and a few more after a mistaken NEW GAME. A table's games past it (by
#: the order they started) are kept, never scored, and the table is flagged to the
#: organiser (:meth:`.TableEvents.over_limit`): so a stuck NEW GAME button or a table login
#: opening thousands of games costs every later event and page a bounded time.
MAX_GAMES_PER_ROUND = 20


def derive(db: sqlite3.Connection, table: str, game: str) -> None:
    """Rebuild one game's row from its stored events, then score its board."""
    events = game_events(db, table, game)
    row = derive_game(table, game, events)
    started = min((e["seq"] for e in events), default=None)
    pairing_id = next((e["assignment"].get("pairing") for e in events
                       if e["type"] == "new_game" and e["assignment"] is not None), None)
    # A round this ledger has not paired counts as none: naming many rounds opens no more.
    limit_round = None if row.round is None else next(iter(db.execute(
        "SELECT number FROM rounds WHERE number=?", (row.round,)).fetchone() or ()), None)
    over = _over_limit(db, table, game, limit_round, started)
    db.execute(
        "INSERT OR REPLACE INTO games (table_name, game, round, board, white, black,"
        " challenges, lost_w, lost_b, ending, winner, result, scored, started_seq,"
        " over_limit, pairing_id, limit_round)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (table, game, row.round, row.board, row.white, row.black, row.challenges,
         row.lost_w, row.lost_b, row.ending, row.winner,
         None if row.result is None else row.result.value, 0, started, int(over), pairing_id,
         limit_round),
    )
    if not over:
        # This game may push the one that was last within the limit out of it.
        db.execute(
            "UPDATE games SET over_limit=1 WHERE table_name=:t AND limit_round IS :r"
            " AND over_limit=0 AND started_seq > (SELECT started_seq FROM games"
            " WHERE table_name=:t AND limit_round IS :r AND over_limit=0"
            " ORDER BY started_seq LIMIT 1 OFFSET :n)",
            {"t": table, "r": limit_round, "n": MAX_GAMES_PER_ROUND - 1})
    if row.round is not None and row.board is not None:
        score(db, row.round, row.board)


def _over_limit(
    db: sqlite3.Connection, table: str, game: str, round_number: int | None,
    started: int | None,
) -> bool:
    """Whether a game started at ``started`` comes after the first
    :data:`MAX_GAMES_PER_ROUND` games of its table under ``round_number`` (by start, so
    arrival order does not matter; one indexed read of at most the limit's rows)."""
    nth = db.execute(
        "SELECT started_seq FROM games WHERE table_name=? AND limit_round IS ?"
        " AND over_limit=0 AND game<>? ORDER BY started_seq LIMIT 1 OFFSET ?",
        (table, round_number, game, MAX_GAMES_PER_ROUND - 1)).fetchone()
    return nth is not None and (started is None or started > nth[0])


def fold_challenge(db: sqlite3.Connection, table: str, event: wire.Event) -> bool:
    """Fold one new challenge into its game's row, as :func:`derive_game` would count
    it, without reading the game's events again (a challenge changes the counts only,
    never the board's result); False when the game has no row yet (derive it)."""
    assert event["type"] == "challenge"
    game = str(event["game"])
    # The pieces lost are the latest challenge's (by seq), which may have come first.
    later = ("EXISTS(SELECT 1 FROM events e WHERE e.table_name=games.table_name"
             " AND e.seq>:seq AND e.game=games.game AND e.type='challenge')")
    return bool(db.execute(
        f"UPDATE games SET challenges=MAX(challenges, :number),"
        f" lost_w=CASE WHEN {later} THEN lost_w ELSE :w END,"
        f" lost_b=CASE WHEN {later} THEN lost_b ELSE :b END"
        " WHERE table_name=:table AND game=:game",
        {"number": event["number"], "w": event["eliminated"]["W"],
         "b": event["eliminated"]["B"], "seq": event["seq"], "table": table, "game": game},
    ).rowcount)


def score(db: sqlite3.Connection, round_number: int, board: int) -> None:
    """Mark the game that counts for a board, and give the board its result.

    The rule (a function of the games' content, never of their arrival order): of
    the games at the board's table whose ``new_game`` carried this very pairing,
    the scored one is the first to start (lowest seq) that was not abandoned, among
    those within the table's :data:`MAX_GAMES_PER_ROUND` and carrying the pairing's id;
    a later game under the same assignment is kept, not scored, and shown to the
    organiser (:meth:`.TableEvents.unscored_games`). A corrected board keeps its result.
    """
    chosen, candidates = scored_game(db, round_number, board)
    table = candidates[0][0] if candidates else None
    # A game of the board at a table it no longer has counts no more.
    db.execute("UPDATE games SET scored=0 WHERE round=? AND board=? AND scored=1"
               " AND table_name IS NOT ?", (round_number, board, table))
    if not candidates:
        return
    # Through the index of scored games: never every game a table opened for the board.
    db.execute("UPDATE games SET scored=0 WHERE table_name=? AND round=? AND board=?"
               " AND scored=1 AND game IS NOT ?", (table, round_number, board, chosen))
    db.execute("UPDATE games SET scored=1 WHERE table_name=? AND game=?", (table, chosen))
    result = next((r for _t, g, _e, r in candidates if g == chosen), None)
    db.execute(
        "UPDATE pairings SET result=? WHERE round=? AND board=? AND corrected=0 AND forfeit=0",
        (result, round_number, board),
    )


def stored_event(text: str) -> wire.Event:
    # Kept as wire.check_event returned it.
    return cast(wire.Event, json.loads(text))


def game_events(db: sqlite3.Connection, table: str, game: str) -> list[wire.Event]:
    return [stored_event(p) for (p,) in db.execute(
        "SELECT payload FROM events WHERE table_name=? AND game=? ORDER BY seq", (table, game))]


def scored_game(
    db: sqlite3.Connection, round_number: int, board: int
) -> tuple[str | None, list[tuple[str, str, str | None, str | None]]]:
    """(the game that counts, every candidate as (table, game, ending, result)) of a board:
    the games at its table started with its pairing, first started first (see
    :func:`score`). No candidate: the board has no table or no such game."""
    pairing = db.execute(
        "SELECT white, black, table_name, pairing_id FROM pairings WHERE round=? AND board=?",
        (round_number, board),
    ).fetchone()
    if pairing is None or pairing[2] is None:
        return None, []
    white, black, table, pairing_id = pairing
    # A pairing made with an id (every one since issue 27) counts only games that carry
    # it: no earlier run of the event, no other ledger, could have started one.
    candidates = db.execute(
        "SELECT g.table_name, g.game, g.ending, g.result FROM games g"
        " WHERE g.table_name=? AND g.limit_round=? AND g.over_limit=0 AND g.round=?"
        " AND g.board=? AND g.white=? AND g.black IS ? AND (? IS NULL OR g.pairing_id IS ?)"
        " ORDER BY g.started_seq",
        (table, round_number, round_number, board, white, black, pairing_id, pairing_id),
    ).fetchall()
    chosen = next((g for _t, g, ending, _r in candidates if ending != "abandoned"), None)
    return chosen, [tuple(c) for c in candidates]


def derive_game(table: str, game: str, events: Sequence[wire.Event]) -> GameRow:
    """A game's row from its events (in sequence order); ``scored`` is the board's to say."""
    assignment: wire.AssignmentBody | None = None
    challenges = lost_w = lost_b = 0
    ending: str | None = None
    winner: str | None = None
    for e in events:
        if e["type"] == "new_game":
            assignment = e["assignment"]
        elif e["type"] == "challenge":
            challenges = max(challenges, e["number"])
            lost_w, lost_b = e["eliminated"]["W"], e["eliminated"]["B"]
        elif e["type"] == "game_over":
            ending, winner = e["ending"]["kind"], e["ending"]["winner"]
    result: Result | None = None
    if winner is not None:
        result = Result.from_winner(Colour(winner))
    elif ending == "draw":
        result = Result.DRAW
    return GameRow(
        table=table, game=game,
        round=None if assignment is None else assignment["round"],
        board=None if assignment is None else assignment["board"],
        white=None if assignment is None else assignment["white"],
        black=None if assignment is None else assignment["black"],
        challenges=challenges, lost_w=lost_w, lost_b=lost_b, ending=ending, winner=winner,
        result=result, scored=False,
    )
