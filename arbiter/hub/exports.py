"""Exports of the ledger: standings, pairings and games, as CSV or JSON.

Each export is a list of flat rows (the JSON form) with fixed columns (the
CSV form, header first). None of them holds a rank: games give the count of
challenges and of pieces lost per side, never which pieces.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import TypeAlias

from arbiter.hub.errors import ExportError
from arbiter.hub.ledger import Ledger
from arbiter.tournament.standings import standings
from arbiter.tournament.trf import complete_rounds, export_trf

STANDINGS_COLUMNS = ("rank", "name", "score", "played", "wins", "draws", "losses", "byes")
PAIRINGS_COLUMNS = ("round", "board", "table", "white", "black", "result", "corrected")
GAMES_COLUMNS = (
    "table", "game", "round", "board", "white", "black", "challenges", "lost_w", "lost_b",
    "ending", "winner", "result", "scored",
)
KINDS = ("standings", "pairings", "games")

#: One cell of an export, and one row (column: cell).
Cell: TypeAlias = str | int | float | bool | None
Row: TypeAlias = dict[str, Cell]


def standings_rows(ledger: Ledger) -> tuple[tuple[str, ...], list[Row]]:
    """(columns, rows): the standings, one column per tie-break in force."""
    breaks = ledger.admin.tiebreaks()
    columns = STANDINGS_COLUMNS + tuple(t.value for t in breaks)
    rows: list[Row] = [
        {
            "rank": s.rank, "name": s.name, "score": s.score, "played": s.played,
            "wins": s.wins, "draws": s.draws, "losses": s.losses, "byes": s.byes,
            **{t.value: v for t, v in s.tiebreaks},
        }
        for s in ledger.admin.standings()
    ]
    return columns, rows


def pairings_rows(ledger: Ledger) -> tuple[tuple[str, ...], list[Row]]:
    """(columns, rows): every pairing with its table and result."""
    rows: list[Row] = [
        {
            "round": r.pairing.round, "board": r.pairing.board, "table": r.table,
            "white": r.pairing.white, "black": r.pairing.black,
            "result": None if r.result is None else r.result.value, "corrected": r.corrected,
        }
        for r in ledger.admin.pairings()
    ]
    return PAIRINGS_COLUMNS, rows


def games_rows(ledger: Ledger) -> tuple[tuple[str, ...], list[Row]]:
    """(columns, rows): every game seen at a table."""
    rows: list[Row] = [
        {
            "table": g.table, "game": g.game, "round": g.round, "board": g.board,
            "white": g.white, "black": g.black, "challenges": g.challenges,
            "lost_w": g.lost_w, "lost_b": g.lost_b, "ending": g.ending, "winner": g.winner,
            "result": None if g.result is None else g.result.value, "scored": g.scored,
        }
        for g in ledger.events.games()
    ]
    return GAMES_COLUMNS, rows


def export(ledger: Ledger, kind: str, fmt: str) -> str:
    """The ``kind`` export ("standings", "pairings", "games") as ``fmt`` ("csv" or "json")."""
    makers = {"standings": standings_rows, "pairings": pairings_rows, "games": games_rows}
    if kind not in makers or fmt not in ("csv", "json"):
        raise ExportError(f"no export {kind!r} as {fmt!r}")
    columns, rows = makers[kind](ledger)
    return to_csv(columns, rows) if fmt == "csv" else to_json(rows)


#: What a spreadsheet reads as the start of a formula (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def cell(value: object) -> str:
    """One CSV cell: None empty; text that a spreadsheet would run as a formula (a player
    named ``=HYPERLINK(...)``, from a CSV import or a table's new game) gets a leading
    single quote, so it is shown as typed. Numbers stay numbers (a negative score is a
    number, not a formula)."""
    if value is None:
        return ""
    if isinstance(value, (bool, int, float)):
        return str(value)
    text = str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def to_csv(columns: Sequence[str], rows: Sequence[Row]) -> str:
    """CSV text: a header, then one line a row (None as an empty cell), every text cell
    quoted (every cell: OWASP's advice) and neutralised (:func:`cell`)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)
    writer.writerow([cell(c) for c in columns])
    for row in rows:
        writer.writerow([cell(row[c]) for c in columns])
    return out.getvalue()


def to_json(rows: Sequence[Row]) -> str:
    return json.dumps(list(rows), indent=1, ensure_ascii=False) + "\n"


def trf(ledger: Ledger) -> str:
    """The event as a FIDE TRF file (arbiter.tournament.trf): the rounds whose results are
    all in, players in seed order, each ranked as the standings after those rounds rank
    them (the tie-breaks in force). ``XXR`` is the announced number of rounds; when none
    is announced, the rounds paired so far (at least 1): a file a rating officer can read,
    from which an engine pairs no further round until the length is set."""
    games = ledger.admin.games_for_pairing()
    total = ledger.admin.total_rounds()
    if total is None:
        total = max(1, len(ledger.admin.rounds()))
    seeded = ledger.admin.seeded()
    done = complete_rounds(games)
    ranks = {s.name: s.rank for s in standings(
        seeded, [g for g in games if g.pairing.round <= done], ledger.admin.tiebreaks())}
    return export_trf(ledger.event, seeded, games, total, ranks=ranks)
