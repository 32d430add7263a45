"""Reading the players of an event from CSV text.

A header line names the columns: ``name`` (required) and ``rating``
(optional, a whole number, 0 when empty); other columns are ignored. Blank
lines are skipped. Names are stripped of surrounding spaces and must be unique,
ignoring case; a rating is digits only (0 or more), as the organiser's form takes it.
"""

from __future__ import annotations

import csv
import io

from arbiter.tournament.errors import PlayerImportError
from arbiter.tournament.model import Player

#: Longest name accepted: it has to fit a table's status line.
MAX_NAME = 40


def read_players_csv(text: str) -> list[Player]:
    """The players in ``text``, in file order; PlayerImportError names the bad line."""
    reader = csv.reader(io.StringIO(text))
    header: list[str] | None = None
    players: list[Player] = []
    seen: set[str] = set()
    for row in reader:
        line = reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if header is None:
            header = [cell.strip().lower() for cell in row]
            if "name" not in header:
                raise PlayerImportError(line, "the header has no 'name' column")
            continue
        cells = dict(zip(header, (c.strip() for c in row), strict=False))
        name = cells.get("name", "")
        if not name:
            raise PlayerImportError(line, "empty name")
        if len(name) > MAX_NAME:
            raise PlayerImportError(line, f"name longer than {MAX_NAME} characters")
        if name.casefold() in seen:
            raise PlayerImportError(line, f"{name!r} appears twice (names ignore case)")
        raw_rating = cells.get("rating", "")
        # Digits only, as the organiser's form takes them: no sign, no -5.
        if raw_rating and not (raw_rating.isascii() and raw_rating.isdigit()):
            raise PlayerImportError(
                line, f"rating {raw_rating!r} is not a whole number of 0 or more")
        rating = int(raw_rating) if raw_rating else 0
        seen.add(name.casefold())
        players.append(Player(name, rating))
    if header is None:
        raise PlayerImportError(1, "no header line")
    return players
