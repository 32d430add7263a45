"""A venue in a ledger, as the hub's pages see it mid-round: for the page tests (axe,
layouts), and scripts/hub_screenshots.py.

``populate(ledger, tables)``: 2 x tables players, round 1 paired (Swiss) and each board
on table <board>; every table online with a game on and a few challenges, except:
table 1's game is over (a White win, its record kept: a reveal to show), table 2 is
offline, and the last table has never been heard from (silent once the feed looks).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

from arbiter.hub.ledger import Ledger
from tests.support.hub_secrecy import AT, RECORD
from tests.support.web import PIN, live_server
from web.hub import create_hub_app
from web.hub.feed import VenueFeed

NAMES = ("Ana", "Ben", "Carla", "Dado", "Elena", "Fely", "Gino", "Hana", "Ivo", "Juana",
         "Kiko", "Lorna", "Migs", "Nena", "Oscar", "Pia", "Quino", "Rosa", "Santi", "Tessa")


def player_names(count: int) -> list[str]:
    """``count`` distinct, realistic names (some long, as a venue has them)."""
    out = []
    for i in range(count):
        base = NAMES[i % len(NAMES)]
        out.append(base if i < len(NAMES) else f"{base} {chr(65 + i // len(NAMES))}.")
    out[min(3, count - 1)] = "Maria Concepcion Dimagiba"  # a long one
    return out


#: Names as long as a venue's screen must show whole (about 20 letters), for the screen's
#: layout tests and screenshots.
LONG_NAMES = ("Oscar del Rosario", "Hugo Ramos Villareal", "Maria Clara Dizon", "Jose Mari Chan",
              "Concepcion Dimagiba", "Teodoro Agoncillo Jr", "Lualhati Bautista", "Amado Hernandez",
              "Wilhelmina Orozco", "Bienvenido Lumbera")


def long_names(count: int) -> list[str]:
    """``count`` distinct names of 14 to 21 characters (a numeral where they repeat)."""
    return [LONG_NAMES[i % len(LONG_NAMES)] + (f" {i // len(LONG_NAMES) + 1}"
                                               if i >= len(LONG_NAMES) else "")
            for i in range(count)]


def populate(ledger: Ledger, tables: int, names: list[str] | None = None) -> None:
    """The venue described above; ``names`` (2 x tables) instead of :func:`player_names`."""
    names = player_names(2 * tables) if names is None else names
    ledger.admin.import_players_csv("name,rating\n" + "".join(
        f"{n},{2400 - 10 * i}\n" for i, n in enumerate(names)))
    ledger.admin.pair_round("swiss")
    for row in ledger.admin.pairings(1):
        p = row.pairing
        table = str(p.board)
        ledger.admin.assign_table(1, p.board, table, "organiser")
        if p.board == tables:
            continue  # never heard from
        ledger.tables.set_online(table, p.board != 2)
        seq = 1
        ledger.events.record(table, {
            "format": 1, "table": table, "seq": seq, "game": "1", "type": "new_game",
            "at": AT, "assignment": {"round": 1, "board": p.board, "white": p.white,
                                     "black": p.black, "pairing": row.pairing_id}})
        for n in range(1, 1 + p.board % 6):
            seq += 1
            ledger.events.record(table, {
                "format": 1, "table": table, "seq": seq, "game": "1", "type": "challenge",
                "number": n, "attacker_side": "W" if n % 2 else "B", "result": "attacker",
                "eliminated": {"W": n // 2, "B": (n + 1) // 2}, "at": AT + n})
        state = "idle"
        if p.board == 1:
            seq += 1
            ledger.events.record(table, {
                "format": 1, "table": table, "seq": seq, "game": "1", "type": "game_over",
                "ending": {"kind": "flag_captured", "winner": "W", "at": AT + 60}})
            # As JSON parses it.
            ledger.tables.set_record(table, "1", json.loads(json.dumps(RECORD)))
            state = "game_over"
        ledger.tables.set_status(table, {"format": 1, "table": table, "state": state, "game_id": 1,
                                  "challenge_count": seq - 1, "event_seq": seq})


@contextmanager
def served_venue(data: Path, tables: int, names: list[str] | None = None) -> Iterator[Any]:
    """The hub's app over a ledger of :func:`populate` (``tables`` tables, silence looked
    for), served by waitress on a free port; yields the server."""
    with Ledger(data / "hub.sqlite", "club-night") as ledger:
        populate(ledger, tables, names)
        feed = VenueFeed(ledger, timedelta(minutes=10))
        feed.look_for_silence()
        app = create_hub_app(ledger, feed, data,
                             test_config={"ADMIN_PIN": PIN, "TESTING": True})
        with live_server(app, streams=8) as server:
            yield server
