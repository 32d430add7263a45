"""What the hub's public pages show, read from the ledger: plain JSON-ready dicts.

Every value here is public while a game is on: table states, counts of
challenges and of pieces lost per side, players, pairings, results and
standings. A table's status is copied field by field from a fixed list, never
passed through, so whatever a later table adds to it stays off the venue
screen. A game's record (its ranks) is shown only once the ledger holds the
game's ``game_over`` event and the table's record of it, and, for an abandoned game,
once the table has begun a game after it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from arbiter.hub.ledger import GameRow, Ledger, PairingRow
from arbiter.hub.unplayed import forfeit_label
from arbiter.tournament.standings import standings as ranked
from arbiter.tournament.trf import complete_rounds
from web.kit.present import ending_text, reveal

#: The state shown for a table whose board's game has not begun: no NEW GAME yet since
#: the assignment (shown as "new game needed").
NEW_GAME_NEEDED = "new_game_needed"
#: Why every table's online state is unknown while the hub's own broker link is down
#: (its last will, or its coming back, could not reach the hub).
LINK_DOWN = "hub's broker link down"
#: The parts of a table's status the venue shows (public, and without a rank; its values
#: are the enumerated states of the wire format, so nothing a table writes there is shown).
STATUS_FIELDS = ("state",)


def _game_key(game: GameRow) -> tuple[int, str]:
    """Order a table's games by number where they are numbers (table ids are strings)."""
    return (int(game.game), "") if game.game.isdigit() else (0, game.game)


def latest_game(ledger: Ledger, table: str) -> GameRow | None:
    return ledger.events.latest(table)


def _result(row: PairingRow | None) -> str | None:
    if row is not None and row.forfeit:
        return forfeit_label(row.result)
    return None if row is None or row.result is None else row.result.value


def current_pairings(
    ledger: Ledger, tables: Collection[str] | None = None
) -> tuple[int | None, dict[str, PairingRow]]:
    """(latest round, its pairings by table), of ``tables`` only when given."""
    rounds = ledger.admin.rounds()
    if not rounds:
        return None, {}
    number = rounds[-1][0]
    return number, {r.table: r for r in ledger.admin.pairings(number, tables=tables)
                    if r.table is not None}


def unscored(ledger: Ledger) -> dict[tuple[str, str], str]:
    """Why each game played that does not count is not scored, by (table, game)."""
    return {(t, g): why for t, g, why in ledger.events.unscored_games()}


def table_row(
    ledger: Ledger,
    table: str,
    pairing: PairingRow | None,
    silent: Mapping[str, str],
    not_scored: Mapping[tuple[str, str], str] | None = None,
    *,
    link_up: bool = True,
) -> dict[str, Any]:
    """One table on the venue screen.

    Under a pairing, the table's latest game is shown only when it is that board's
    (its new game carried the pairing), or when it was played there and does not count
    (with why, ``unscored``); the game of a round before, or the start-up game, is not
    shown under the new pairing: no result until this round's game has one. Its online
    state is unknown (None) while the hub's own broker link is down (``link_up``
    False): a last will could not reach the hub; then ``unknown`` says why, and no table
    is called silent (an "offline" or a quiet spell read meanwhile is the link's, not the
    table's).
    """
    online, status, seen = ledger.tables.state(table)
    silent_why = silent.get(table)
    unknown_why = None
    if not link_up:
        online, silent_why, unknown_why = None, None, LINK_DOWN
    game, why, state = _shown_game(ledger, table, pairing, not_scored,
                                   status["state"] if status else None)
    white = pairing.pairing.white if pairing else (game.white if game else None)
    black = pairing.pairing.black if pairing else (game.black if game else None)
    ending = None
    if game is not None and game.ending is not None:
        ending = {"kind": game.ending, "winner": game.winner}
    return {
        "table": table,
        "online": online,
        "state": state,
        "game": game.game if game else None,
        "challenges": game.challenges if game else 0,
        "lost": {"W": game.lost_w if game else 0, "B": game.lost_b if game else 0},
        "round": pairing.pairing.round if pairing else (game.round if game else None),
        "board": pairing.pairing.board if pairing else (game.board if game else None),
        "white": white,
        "black": black,
        # A game shown that does not count has no result of the board's to show beside it.
        "result": None if why else _result(pairing),
        "over": ending is not None,
        "ending": ending,
        "ending_text": ending_text(ending),
        "silent": silent_why,
        "unknown": unknown_why,
        "unscored": why,
        "last_seen": seen,
        "software": status.get("software") if status else None,
    }


def _shown_game(
    ledger: Ledger, table: str, pairing: PairingRow | None,
    not_scored: Mapping[tuple[str, str], str] | None, state: str | None,
) -> tuple[GameRow | None, str | None, str | None]:
    """The game a table shows under ``pairing``, why it does not count (None: it does, or
    none is shown), and the table's ``state`` as shown: a game of a round before is
    hidden, and the device's state then (say "game over") is that game's, so it reads
    "new game needed"."""
    game = latest_game(ledger, table)
    if game is None or pairing is None or (
            game.scored and (game.round, game.board) == (pairing.pairing.round,
                                                         pairing.pairing.board)):
        return game, None, state
    why = (unscored(ledger) if not_scored is None else not_scored).get((table, game.game))
    if why is not None:
        return game, why, state  # played there, and does not count: shown, with why
    # The round before's: its board's game has not begun.
    return None, None, (NEW_GAME_NEEDED if state is not None else None)


def venue(
    ledger: Ledger, silent: Mapping[str, str], broker: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Every table heard of or assigned in the latest round, by name; ``broker`` is the
    hub's own broker link (``up``, ``since``), None where the hub has none."""
    number, by_table = current_pairings(ledger)
    names = sorted(set(ledger.tables.names()) | set(by_table), key=table_key)
    up = broker is None or bool(broker.get("up"))
    not_scored = unscored(ledger)
    return {
        "event": ledger.event,
        "round": number,
        "rounds_total": ledger.admin.total_rounds(),
        "broker": None if broker is None else dict(broker),
        "tables": [table_row(ledger, t, by_table.get(t), silent, not_scored, link_up=up)
                   for t in names],
    }


#: The venue screen's tables a page (the rest on further pages, shown in turn).
SCREEN_PER_PAGE = 50
#: The screen's shape the grid is chosen for (16:9 less the title line), and a card's
#: text in em of its font: about 9 em wide (a name of 18 letters on a line) and 8.2 em
#: tall (number, two names, result, a warning). The fonts themselves follow the card's
#: real size (container units in hub.css), so any screen is filled.
SCREEN_SHAPE = (1920, 1040)
CARD_EMS = (9.0, 8.2)


@dataclass(frozen=True)
class ScreenGrid:
    """The venue screen's grid for a number of tables: columns x rows."""

    columns: int
    rows: int


def screen_grid(tables: int) -> ScreenGrid:
    """The grid that gives a page of ``tables`` cards the largest text on the screen.

    A card's font is the smaller of its width and height over the text's (``CARD_EMS``);
    the columns are those that make it largest (8 tables: 4 x 2, 50: 10 x 5).
    """
    count = max(1, min(tables, SCREEN_PER_PAGE))
    width, height = SCREEN_SHAPE
    best = ScreenGrid(1, count)
    best_font = 0.0
    for columns in range(1, count + 1):
        rows = -(-count // columns)
        font = min(width / columns / CARD_EMS[0], height / rows / CARD_EMS[1])
        if font > best_font:
            best, best_font = ScreenGrid(columns, rows), font
    return best


def table_key(name: str) -> tuple[int, str]:
    """Order table names by number where they are numbers: 2 before 10."""
    return (int(name), "") if name.isdigit() else (1 << 30, name)


def suggested_tables(ledger: Ledger, round_number: int) -> dict[int, str | None]:
    """For each board of a round played at a table, its table, or the one to suggest.

    A board already assigned keeps its table. Board n is suggested the n-th
    table heard of (by number), unless another board of the round has it;
    None where there is no such table (the organiser names one).
    """
    rows = [r for r in ledger.admin.pairings(round_number) if not r.pairing.is_bye]
    known = sorted(ledger.tables.names(), key=table_key)
    used = {r.table for r in rows if r.table is not None}
    out: dict[int, str | None] = {}
    for row in rows:
        board = row.pairing.board
        if row.table is not None:
            out[board] = row.table
            continue
        candidate = known[board - 1] if 0 < board <= len(known) else None
        if candidate is None or candidate in used:
            out[board] = None
        else:
            out[board] = candidate
            used.add(candidate)
    return out


def rounds(ledger: Ledger) -> list[dict[str, Any]]:
    """Every round with its pairings, results and the game played for each, and the byes
    the organiser gave for it."""
    played: dict[tuple[int, int], GameRow] = {}
    for g in ledger.events.games(scored_only=True):
        if g.scored and g.round is not None and g.board is not None:
            # The latest scored game of a board is the one its result came from.
            key = (g.round, g.board)
            if key not in played or _game_key(g) > _game_key(played[key]):
                played[key] = g
    given: dict[int, list[dict[str, Any]]] = {}
    for bye in ledger.unplayed.byes():  # the byes the organiser gave: not at any board
        given.setdefault(bye.pairing.round, []).append(
            {"name": bye.pairing.white, "kind": bye.bye.value, "points": bye.bye.points})
    out = []
    for number, system in ledger.admin.rounds():
        boards = []
        for row in ledger.admin.pairings(number):
            p = row.pairing
            game = played.get((p.round, p.board))
            boards.append({
                "board": p.board, "table": row.table, "white": p.white, "black": p.black,
                "bye": p.is_bye, "result": _result(row), "corrected": row.corrected,
                "forfeit": row.forfeit,
                "game": None if game is None else {"table": game.table, "game": game.game,
                                                  "over": game.ending is not None},
            })
        out.append({"round": number, "system": system, "boards": boards,
                    "byes": given.get(number, [])})
    return out


def standings_stand(ledger: Ledger) -> str:
    """When the standings stand, in words for the venue screen: "standings after round
    2" (the last round with every result in), "provisional" while a later one is in
    play; empty before any round is over."""
    after = complete_rounds(ledger.admin.games_for_pairing())
    if not after:
        return ""
    paired = ledger.admin.rounds()
    in_play = bool(paired) and paired[-1][0] > after
    return f"standings after round {after}" + (" (provisional while round"
                                                f" {paired[-1][0]} is played)" if in_play else "")


def standings(ledger: Ledger) -> dict[str, Any]:
    """The standings with the tie-breaks in force, in order, and when they stand:
    ``after_round`` (the last round with every result in; 0 before any), ``round`` (the
    latest paired), ``rounds_total`` (the announced length, None if not set), and
    ``provisional`` while a later round is in play, with its games ``still_on`` (the
    standings count that round's results so far, so a player with a game still on may
    stand below one who has finished)."""
    tiebreaks = ledger.admin.tiebreaks()
    games = ledger.admin.games_for_pairing()  # read once: the standings and when they stand
    seeded = ledger.admin.seeded()
    rows = [
        {"rank": s.rank, "name": s.name, "score": s.score, "played": s.played, "wins": s.wins,
         "draws": s.draws, "losses": s.losses, "byes": s.byes,
         "tiebreaks": [v for _t, v in s.tiebreaks]}
        for s in ranked(seeded, games, tiebreaks)
    ]
    withdrawn = [p.name for p in seeded if p.withdrawn]
    after = complete_rounds(games)
    paired = ledger.admin.rounds()
    on = [g.pairing for g in games if g.pairing.round > after and not g.complete]
    tables = {(r.pairing.round, r.pairing.board): r.table
              for number in sorted({p.round for p in on}) for r in ledger.admin.pairings(number)}
    still_on = [{"round": p.round, "board": p.board, "white": p.white, "black": p.black,
                 "table": tables.get((p.round, p.board))} for p in on]
    return {"tiebreaks": [t.value for t in tiebreaks], "rows": rows, "withdrawn": withdrawn,
            "after_round": after,
            "round": paired[-1][0] if paired else None,
            "rounds_total": ledger.admin.total_rounds(),
            "provisional": bool(paired) and paired[-1][0] > after, "still_on": still_on}


def game_summary(g: GameRow) -> dict[str, Any]:
    ending = None if g.ending is None else {"kind": g.ending, "winner": g.winner}
    return {
        "table": g.table, "game": g.game, "round": g.round, "board": g.board,
        "white": g.white, "black": g.black, "challenges": g.challenges,
        "lost": {"W": g.lost_w, "B": g.lost_b}, "over": ending is not None, "ending": ending,
        "ending_text": ending_text(ending),
        "result": None if g.result is None else g.result.value, "scored": g.scored,
    }


def games(ledger: Ledger) -> list[dict[str, Any]]:
    return [game_summary(g) for g in ledger.events.games()]


def game(ledger: Ledger, table: str, game_id: str) -> dict[str, Any] | None:
    """One game; with ``reveal`` (survivors, fallen, challenges) once it is over."""
    row = next((g for g in ledger.events.games(table) if g.game == game_id), None)
    if row is None:
        return None
    out = game_summary(row)
    out["reveal"] = None
    # An abandoned game stays sealed until its table has begun the next game.
    out["sealed"] = row.ending is None or (
        row.ending == "abandoned" and row.challenges > 0
        and not ledger.events.begun_after(table, game_id))
    if not out["sealed"]:
        record = ledger.tables.record(table, game_id)
        if record is not None and record.get("ending"):
            try:
                out["reveal"] = reveal(record)
            except (KeyError, TypeError, ValueError):
                out["reveal"] = None  # a damaged record: the counts still stand
    return out
