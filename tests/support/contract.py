"""Table events as the table side publishes them, built with the wire format's own types
(arbiter.wire; the contract in docs/tournament/mqtt.md)."""

from __future__ import annotations

from arbiter import wire

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
