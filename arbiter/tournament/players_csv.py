"""Reading the players of an event from CSV text.

A header line names the columns: ``name`` (required) and ``rating``
(optional, a whole number, 0 when empty); other columns are ignored. Blank
lines are skipped. Names follow the one rule of :mod:`arbiter.tournament.names`
(the TRF file and the API keep it too) and must be unique, ignoring case; a rating
is digits only (0 or more), as the organiser's form takes it.
"""

from __future__ import annotations

import csv
import io

from arbiter.tournament.errors import PlayerImportError, PlayerNameError
from arbiter.tournament.model import Player
from arbiter.tournament.names import check_name


def read_players_csv(text: str) -> list[Player]:
    """The players in ``text``, in file order; PlayerImportError names the bad line."""
    reader = csv.reader(io.StringIO(text))
    header: list[str] | None = None
    players: list[Player] = []
    seen: set[str] = set()
    ended = 0  # the line the row before ended on: a quoted cell may span lines
    for row in reader:
        line, ended = ended + 1, reader.line_num
        if not any(cell.strip() for cell in row):
            continue
        if header is None:
            header = [cell.strip().lower() for cell in row]
            if "name" not in header:
                raise PlayerImportError(line, "the header has no 'name' column")
            continue
        # As given: the name rule, not the CSV reader, says what is kept of its spaces.
        cells = dict(zip(header, row, strict=False))
        try:
            name = check_name(cells.get("name", ""))
        except PlayerNameError as exc:
            raise PlayerImportError(line, str(exc)) from None
        if name.casefold() in seen:
            raise PlayerImportError(line, f"{name!r} appears twice (names ignore case)")
        raw_rating = cells.get("rating", "").strip()
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
