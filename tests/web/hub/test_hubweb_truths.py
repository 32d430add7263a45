"""Small truths of the hub's pages (issue 19, findings 15 and 17): the login page's
set-pin hint names this hub's data directory; a game's challenges counted in good
English; a board's result column says in words that its game has not started or is
in play; the organiser's help text names only buttons the page has."""

from __future__ import annotations

import html
import re
import shlex
from typing import Any

import pytest

from tests.support.contract import AT, challenge
from tests.support.organiser import login as _login
from tests.support.web import PIN
from tests.web.hub.conftest import Hub

pytestmark = pytest.mark.timeout(60)


def test_login_hint_sets_the_pin_of_this_hubs_data_directory(hub: Hub) -> None:
    page = hub.app.test_client().get("/organiser/login").get_data(as_text=True)
    hint = re.search(r"<code>([^<]+)</code>", page)
    assert hint is not None
    words = shlex.split(html.unescape(hint.group(1)))
    assert words[:2] == ["gg-arbiter", "hub"] and words[-1] == "set-pin"
    options = dict(zip(words[2:-1:2], words[3:-1:2], strict=True))
    assert options == {"--event": hub.ledger.event, "--data": str(hub.data)}


def _assigned_round(hub: Hub) -> Any:
    for name in ("Ana", "Ben"):
        hub.ledger.admin.add_player(name)
    (p,) = hub.ledger.admin.pair_round("round-robin")
    hub.ledger.admin.assign_table(1, 1, "1", "test")
    return p


def _result_cell(page: str) -> str:
    row = re.search(r'<tr data-board="1">.*?<td class="res">(.*?)</td>', page, re.S)
    assert row is not None
    return re.sub(r"<[^>]+>", "", row.group(1)).strip()


def test_organiser_result_column_says_not_started_then_in_play(hub: Hub) -> None:
    p = _assigned_round(hub)
    client = hub.app.test_client()
    _login(client)
    assert _result_cell(client.get("/organiser").get_data(as_text=True)) == "not started"
    hub.ledger.events.record("1", {"format": 1, "table": "1", "seq": 1, "game": "1",
                                  "type": "new_game", "at": AT,
                                  "assignment": {"round": 1, "board": 1, "white": p.white,
                                                 "black": p.black, "pairing": hub.ledger.admin
                                                 .pairings(1)[0].pairing_id}})
    assert _result_cell(client.get("/organiser").get_data(as_text=True)) == "in play"
    games = client.get("/games").get_data(as_text=True)
    assert "no result yet" in games and ">on<" not in games


def test_help_text_names_only_buttons_the_page_has(hub: Hub) -> None:
    _assigned_round(hub)
    client = hub.app.test_client()
    _login(client)
    page = client.get("/organiser").get_data(as_text=True)
    buttons = {re.sub(r"\s+", " ", b).strip()
               for b in re.findall(r"<button[^>]*>(.*?)</button>", page, re.S)}
    named = re.findall(r"press ([A-Z][a-z]+(?: [a-z]+)*)", page)
    assert named, "the help text names no button any more"
    for name in named:
        assert name in buttons, (name, sorted(buttons))


@pytest.mark.parametrize(("count", "words"), [(1, "1 challenge ·"), (2, "2 challenges ·")])
def test_a_games_challenges_are_counted_in_english(hub: Hub, count: int, words: str) -> None:
    hub.ledger.events.record("1", {"format": 1, "table": "1", "seq": 1, "game": "1",
                                  "type": "new_game", "at": AT, "assignment": None})
    for n in range(1, count + 1):
        hub.ledger.events.record("1", challenge("1", n + 1, "1", n, 0, n))
    page = hub.app.test_client().get("/games/1/1").get_data(as_text=True)
    assert words in page


def test_organiser_refuses_a_name_differing_only_in_case_and_a_negative_csv_rating(
    hub: Hub,
) -> None:
    client = hub.app.test_client()
    api = {"X-Admin-PIN": PIN}
    added = client.post("/api/organiser/players", json={"name": "Ana"}, headers=api)
    assert added.status_code == 200
    refused = client.post("/api/organiser/players", json={"name": "ana"}, headers=api)
    assert refused.status_code == 409 and "Ana" in refused.get_json()["error"]
    csv = client.post("/api/organiser/players/import", json={"csv": "name,rating\nBen,-5\n"},
                      headers=api)
    assert csv.status_code == 409 and "-5" in csv.get_json()["error"]
    assert [p.name for p in hub.ledger.admin.players()] == ["Ana"]
