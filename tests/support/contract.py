"""Table events as the table side publishes them, built with the wire format's own types
(arbiter.wire; the contract in docs/tournament/mqtt.md)."""

from __future__ import annotations

from typing import cast

from arbiter import wire
from arbiter.hub.ledger import Ledger

#: 2026-11-23T20:00:00Z, as a table's clock gives it (seconds since 1970).
AT = 1795464000.0


def new_game(
    table: str, seq: int, game: str, assignment: wire.AssignmentBody | None = None
) -> wire.Event:
    return wire.event(table, seq, game, wire.new_game(assignment, AT))


def challenge(
    table: str, seq: int, game: str, number: int, lost_w: int, lost_b: int
) -> wire.Event:
    return wire.event(table, seq, game, wire.challenge(
        number, "W", "attacker", {"W": lost_w, "B": lost_b}, AT))


def game_over(table: str, seq: int, game: str, kind: str, winner: str | None) -> wire.Event:
    return wire.event(table, seq, game, wire.game_over(kind, winner, AT))


def assignment(round_number: int, board: int, white: str, black: str) -> wire.AssignmentBody:
    return wire.assignment(round_number, board, white, black)


def assigned(ledger: Ledger, round_number: int, board: int) -> wire.AssignmentBody:
    """The assignment ``ledger`` sends for a board: with the pairing's id, as a table that
    got it carries it into its NEW GAME."""
    row = next(r for r in ledger.admin.pairings(round_number) if r.pairing.board == board)
    p = row.pairing
    return wire.assignment(p.round, p.board, p.white, str(p.black), row.pairing_id)


def carrying(ledger: Ledger, event: wire.Event) -> wire.Event:
    """``event`` as a table that got ``ledger``'s assignment sends it: a NEW GAME naming a
    board's round, board and players carries that pairing's id."""
    if event["type"] != "new_game" or event["assignment"] is None:
        return event
    a = event["assignment"]
    rows = [r for r in ledger.admin.pairings(a["round"]) if r.pairing.board == a["board"]]
    if not rows or (rows[0].pairing.white, rows[0].pairing.black) != (a["white"], a["black"]):
        return event
    return cast(wire.Event, {**event, "assignment": assigned(ledger, a["round"], a["board"])})


def without_ids(event: wire.Event) -> wire.Event:
    """``event`` without the pairing id its NEW GAME carries (for comparing ledgers)."""
    if event["type"] != "new_game" or event["assignment"] is None:
        return event
    plain = {k: v for k, v in event["assignment"].items() if k != "pairing"}
    return cast(wire.Event, {**event, "assignment": plain})
