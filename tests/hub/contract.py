"""Table events as the table side publishes them (the contract in docs/tournament.md)."""

from __future__ import annotations

from typing import Any

AT = "2026-11-23T20:00:00.000+00:00"


def new_game(
    table: str, seq: int, game: str, assignment: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {"format": 1, "table": table, "seq": seq, "game": game, "type": "new_game",
            "assignment": assignment, "at": AT}


def challenge(
    table: str, seq: int, game: str, number: int, lost_w: int, lost_b: int
) -> dict[str, Any]:
    return {"format": 1, "table": table, "seq": seq, "game": game, "type": "challenge",
            "number": number, "attacker_side": "W", "result": "attacker",
            "eliminated": {"W": lost_w, "B": lost_b}, "at": AT}


def game_over(table: str, seq: int, game: str, kind: str, winner: str | None) -> dict[str, Any]:
    return {"format": 1, "table": table, "seq": seq, "game": game, "type": "game_over",
            "ending": {"kind": kind, "winner": winner, "at": AT}}


def assignment(round_number: int, board: int, white: str, black: str) -> dict[str, Any]:
    return {"round": round_number, "board": board, "white": white, "black": black}
