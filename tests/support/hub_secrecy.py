"""The hub's secrecy crawler: every public route of a served hub, checked for rank tokens
(the same list as the table's secrecy test, tests/support/web.rank_leaks)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.web import http_get, rank_leaks
from web.hub import public

STATIC = Path(public.__file__).parent / "static"
AT = 1_790_000_000.0
#: A finished game's full record, as a table publishes it on its record topic.
RECORD = {
    "id": 1, "started_at": AT, "assignment": None,
    "challenges": [
        {"number": 1, "attacker": "W:SPY", "defender": "B:5*G", "survivor": "attacker", "at": AT},
        {"number": 2, "attacker": "W:PVT", "defender": "B:FLG", "survivor": "attacker",
         "fallen_flag": True, "at": AT + 5},
    ],
    "survivors": {"W": ["W:SPY", "W:PVT", "W:FLG"], "B": ["B:PVT"]},
    "fallen": {"W": [], "B": ["B:5*G", "B:FLG"]},
    "ending": {"kind": "flag_captured", "winner": "W", "at": AT + 5},
}


def public_paths(tables_games: list[tuple[str, str]]) -> list[str]:
    paths = ["/", "/rounds", "/standings", "/games", "/api/venue", "/api/rounds",
             "/api/standings", "/api/games", "/organiser/login", "/organiser"]
    for table, game in tables_games:
        paths += [f"/games/{table}/{game}", f"/api/games/{table}/{game}"]
    return paths + [f"/static/{p.name}" for p in sorted(STATIC.iterdir())]


#: How the pages name the ending of a game that is over: they name no piece of it.
ENDING_WORDS = ("Flag captured", "Flag home")


def leaks(text: str) -> list[str]:
    """The rank tokens in ``text``, the ending words of games already over left out."""
    for words in ENDING_WORDS:
        text = text.replace(words, "")
    return rank_leaks(text)


def crawl(server: Any, tables_games: list[tuple[str, str]], step: str) -> int:
    """Fetch every public route of the hub; no rank anywhere (the endings of games
    already over are allowed). Returns how many routes were fetched."""
    count = 0
    for path in public_paths(tables_games):
        status, headers, body = http_get(server, path)
        for words in ENDING_WORDS:
            body = body.replace(words, "")
        assert status < 500, f"{path}: {status} ({step})"
        leaks = rank_leaks(body) + rank_leaks(" ".join(f"{k}: {v}" for k, v in headers.items()))
        assert not leaks, f"{path} shows {leaks} while a game is on ({step})"
        count += 1
    return count
