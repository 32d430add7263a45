"""The hub's pages say what is true (issue 19, findings 9 and 10).

After a round is sent and before NEW GAME, a table's card shows the new pairing with no
result (not the round before's, under the new names), and the organiser's table list
does not say "over"; a game played at an assigned table without NEW GAME after the
assignment is shown as not scored, to the organiser (Needs attention) and on the venue.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from arbiter.hub.ledger import Ledger
from arbiter.tournament.model import Player
from tests.support.clock import FakeClock
from tests.support.contract import assigned, challenge, game_over, new_game
from tests.support.organiser import csrf as _csrf
from tests.support.web import PIN
from tests.web.hub.conftest import EVENT, _app
from web.hub.feed import VenueFeed

API = {"X-Admin-PIN": PIN}


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(start=datetime(2026, 11, 23, 20, 0, tzinfo=UTC).timestamp())


@pytest.fixture
def site(tmp_path: Path, clock: FakeClock) -> Iterator[tuple[Ledger, Any]]:
    with Ledger(tmp_path / "hub.sqlite", EVENT, clock=clock.wall) as ledger:
        feed = VenueFeed(ledger, timedelta(minutes=10))
        yield ledger, _app(ledger, feed, tmp_path).test_client()


def _row(client: Any, table: str) -> dict[str, Any]:
    rows = client.get("/api/venue").get_json()["tables"]
    return next(r for r in rows if r["table"] == table)


def _organiser_table_cell(client: Any, table: str) -> str:
    html = client.get("/organiser/login").get_data(as_text=True)
    login = client.post("/organiser/login", data={"pin": PIN, "csrf": _csrf(html)})
    assert login.status_code == 302
    html = client.get("/organiser").get_data(as_text=True)
    row = re.search(rf'<tr data-table="{table}"[^>]*>(.*?)</tr>', html, re.S)
    assert row, html
    return row.group(1)




def test_venue_shows_no_result_under_a_new_pairing_before_new_game(
    site: tuple[Ledger, Any], clock: FakeClock
) -> None:
    ledger, client = site
    ledger.admin.add_players([Player("Ana"), Player("Ben"), Player("Cid"), Player("Dado")])
    ledger.admin.pair_round("round-robin")
    ledger.admin.assign_table(1, 1, "1", who="org")
    a = assigned(ledger, 1, 1)
    for event in (new_game("1", 1, "g1", a), challenge("1", 2, "g1", 1, 0, 1),
                  game_over("1", 3, "g1", "flag_captured", "W")):
        ledger.events.record("1", event)
    row = _row(client, "1")
    assert (row["round"], row["result"], row["over"]) == (1, "1-0", True)
    clock.advance(timedelta(minutes=30).total_seconds())
    (second, _o) = ledger.admin.pair_round("round-robin")
    ledger.admin.assign_table(2, 1, "1", who="org")  # the round is sent; no NEW GAME yet
    ledger.tables.set_status("1", {"format": 1, "table": "1", "state": "game_over"})  # round 1's
    row = _row(client, "1")
    assert (row["round"], row["white"], row["black"]) == (2, second.white, second.black)
    assert (row["result"], row["over"], row["ending"], row["game"]) == (None, False, None, None)
    assert row["challenges"] == 0 and row["unscored"] is None
    assert row["state"] == "new_game_needed"  # shown "new game needed", not "game over"
    venue = client.get("/").get_data(as_text=True)
    assert "Flag captured" not in venue
    cell = _organiser_table_cell(client, "1")
    assert ">over<" not in cell and "1-0" not in cell and "game over" not in cell
    assert "new game needed" in cell


def test_a_game_played_without_new_game_is_flagged_not_scored(
    site: tuple[Ledger, Any], clock: FakeClock
) -> None:
    ledger, client = site
    ledger.admin.add_players([Player("Carla"), Player("Fely")])
    ledger.events.record("1", new_game("1", 1, "g1"))  # the start-up game, no assignment
    clock.advance(timedelta(minutes=1).total_seconds())
    ledger.admin.pair_round("round-robin")
    ledger.admin.assign_table(1, 1, "1", who="org")
    clock.advance(timedelta(minutes=1).total_seconds())
    for event in (challenge("1", 2, "g1", 1, 0, 1), game_over("1", 3, "g1", "resignation", "B")):
        ledger.events.record("1", event)  # played on without NEW GAME
    row = _row(client, "1")
    assert row["result"] is None
    assert row["unscored"] == "played without NEW GAME after round 1 board 1 was assigned"
    card = client.get("/").get_data(as_text=True)
    assert "not scored: played without NEW GAME" in card
    tables = client.get("/api/organiser/tables", headers=API).get_json()
    assert tables["unscored"] == [{"table": "1", "game": "g1",
                                   "why": "played without NEW GAME after round 1 board 1"
                                          " was assigned"}]
    cell = _organiser_table_cell(client, "1")
    assert "not scored" in cell
    html = client.get("/organiser").get_data(as_text=True)
    attention = html.split('id="attention"', 1)[1].split("</section>", 1)[0]
    assert "Table 1 game g1 not scored" in attention and "Nothing:" not in attention
