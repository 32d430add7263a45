"""Words for the pages: game summaries, endings and (after a game only) pieces."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

from arbiter.rules.errors import PieceError
from arbiter.rules.game import Game
from arbiter.rules.pieces import Piece
from arbiter.rules.ranks import Rank, Side

SIDE_NAMES = {side.letter: side.title for side in Side}


def summary(game: Game) -> dict[str, Any]:
    """A game's public summary (no rank): id, start, over, counts, ending, and whether
    its ranks are kept back (``sealed``: on, or abandoned and the next game not begun)."""
    view = game.public_view()
    return {
        "id": view["id"],
        "started_at": view["started_at"],
        "over": view["over"],
        "sealed": game.sealed,
        "challenge_count": view["challenge_count"],
        "eliminated": view["eliminated"],
        "ending": view["ending"],
    }


def ending_text(ending: dict[str, Any] | None) -> str:
    """``Flag captured: White wins``, ``Draw``; empty while the game is on."""
    if not ending:
        return ""
    words = str(ending.get("kind", "")).replace("_", " ").capitalize()
    winner = SIDE_NAMES.get(str(ending.get("winner")))
    return f"{words}: {winner} wins" if winner else words


def clock(unix: float | None) -> str:
    """Local date and time of the arbiter, to the minute."""
    if not unix:
        return ""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(unix))


def duration(seconds: float) -> str:
    """``1:02:03`` or ``2:03``."""
    seconds = max(0, int(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def piece_words(text: str) -> dict[str, str]:
    """A piece of a finished game's record, spelled out for the reveal."""
    try:
        piece = Piece.parse(text)
    except PieceError:
        return {"text": text, "side": "", "code": text, "name": text}
    return {
        "text": text,
        "side": piece.side.title,
        "letter": piece.side.letter,
        "code": piece.rank.code,
        "name": piece.rank.full_name,
    }


def grouped(pieces: list[str]) -> list[dict[str, Any]]:
    """Pieces counted per rank, strongest first: for survivors and fallen."""
    counts: Counter[Rank] = Counter()
    for text in pieces:
        try:
            counts[Piece.parse(text).rank] += 1
        except PieceError:
            continue
    return [
        {"code": rank.code, "name": rank.full_name, "count": counts[rank]}
        for rank in Rank
        if counts[rank]
    ]


def reveal(record: dict[str, Any]) -> dict[str, Any]:
    """The template data of a finished game's full record."""
    rows = []
    for c in record["challenges"]:
        rows.append(
            {
                "number": c["number"],
                "attacker": piece_words(c["attacker"]),
                "defender": piece_words(c["defender"]),
                "result": "split" if c["survivor"] == "none" else c["survivor"],
                "flag_fell": bool(c.get("fallen_flag")),
                "at": c["at"],
            }
        )
    sides = []
    for side in Side:
        sides.append(
            {
                "letter": side.letter,
                "name": side.title,
                "survivors": grouped(record["survivors"][side.letter]),
                "survivor_count": len(record["survivors"][side.letter]),
                "fallen": grouped(record["fallen"][side.letter]),
                "fallen_count": len(record["fallen"][side.letter]),
            }
        )
    ending = record.get("ending") or {}
    end_at = ending.get("at") or record["started_at"]
    return {
        "id": record["id"],
        "started": clock(record["started_at"]),
        "length": duration(end_at - record["started_at"]),
        "ending": ending_text(record.get("ending")),
        "rows": rows,
        "sides": sides,
    }
