"""Forfeits and bye requests from the organiser's page and API (issue 26): behind the PIN,
the forms with their CSRF token, audited under the page's name, refused in words."""

from __future__ import annotations

import html as html_text

import pytest

from arbiter.hub.errors import UnplayedRoundError
from arbiter.tournament.model import Bye, Pairing, Player, Result
from tests.support.organiser import login as _login
from tests.support.web import PIN
from tests.web.hub.conftest import Hub

pytestmark = pytest.mark.timeout(60)

API = {"X-Admin-PIN": PIN}


def _round_one(hub: Hub) -> None:
    hub.ledger.admin.add_players([Player(n, 2000 - 100 * i) for i, n in enumerate("ABCDE")])
    hub.ledger.admin.add_round([Pairing(1, 1, "A", "C"), Pairing(1, 2, "D", "B"),
                                Pairing(1, 3, "E", None)])


def test_forfeit_and_bye_forms_need_the_session_and_its_csrf(hub: Hub) -> None:
    _round_one(hub)
    client = hub.app.test_client()
    # Not logged in: to the login page, nothing recorded.
    assert client.post("/organiser/forfeit", data={"round": "1", "board": "1",
                                                   "came": "white"}).status_code in (302, 403)
    token = _login(client)
    # Logged in, without the token: refused, nothing recorded.
    assert client.post("/organiser/forfeit", data={"round": "1", "board": "1",
                                                   "came": "white"}).status_code in (400, 403)
    assert not hub.ledger.admin.pairings(1)[0].forfeit
    client.post("/organiser/whoami", data={"who": "Chief", "csrf": token})
    page = client.post("/organiser/forfeit", data={
        "round": "1", "board": "1", "came": "black", "csrf": token}, follow_redirects=True)
    text = html_text.unescape(page.get_data(as_text=True))
    assert "round 1 board 1: black wins by forfeit" in text
    assert "0-1 forfeit" in text  # the board's result as the page shows it
    row = hub.ledger.admin.pairings(1)[0]
    assert (row.result, row.forfeit) == (Result.BLACK_WIN, True)
    page = client.post("/organiser/bye", data={
        "name": "C", "round": "2", "points": "0.5", "csrf": token}, follow_redirects=True)
    text = html_text.unescape(page.get_data(as_text=True))
    assert "C: a 0.5-point bye in round 2, not paired in it" in text
    assert "Round 2: C (H, 0.5 points, not paired)" in text
    assert [(c.who, c.what, c.after) for c in hub.ledger.admin.audit()] == [
        ("Chief", "forfeit", "-/+"), ("Chief", "bye", "H")]
    # Once round 2 is paired, the round lists it.
    hub.ledger.admin.correct_result(1, 2, Result.DRAW, "org")
    hub.ledger.admin.pair_round("swiss")
    text = html_text.unescape(client.get("/organiser").get_data(as_text=True))
    assert "Byes given: C (H, 0.5)" in text and "Round 2: C (H" not in text
    with pytest.raises(UnplayedRoundError, match="paired already"):
        hub.ledger.unplayed.cancel_bye("C", 2, "org")
    client.post("/organiser/bye", data={"name": "E", "round": "3", "csrf": token})
    # Taken back from its button.
    client.post("/organiser/bye", data={"name": "E", "round": "3", "cancel": "1",
                                        "csrf": token})
    assert [g.pairing.white for g in hub.ledger.unplayed.byes()] == ["C"]


def test_the_api_records_forfeits_and_byes_and_refuses_in_words(hub: Hub) -> None:
    _round_one(hub)
    client = hub.app.test_client()
    assert client.post("/api/organiser/forfeit", json={"round": 1, "board": 2,
                                                       "came": "none"}).status_code == 401
    done = client.post("/api/organiser/forfeit", headers=API,
                       json={"round": 1, "board": 2, "came": "none"})
    assert done.status_code == 200 and "neither came" in done.get_json()["done"]
    assert hub.ledger.admin.pairings(1)[1].forfeit
    bad = client.post("/api/organiser/forfeit", headers=API,
                      json={"round": 1, "board": 2, "came": "both"})
    assert bad.status_code == 400 and "white, black or none" in bad.get_json()["error"]
    bye_board = client.post("/api/organiser/forfeit", headers=API,
                            json={"round": 1, "board": 3, "came": "white"})
    assert bye_board.status_code == 409 and "is a bye" in bye_board.get_json()["error"]
    # The next round by default, half a point by default.
    assert client.post("/api/organiser/bye", headers=API, json={"name": "B"}).status_code == 200
    assert [(g.pairing.round, g.bye) for g in hub.ledger.unplayed.byes()] == [(2, Bye.HALF)]
    paired = client.post("/api/organiser/bye", headers=API, json={"name": "A", "round": 1})
    assert paired.status_code == 409 and "paired already" in paired.get_json()["error"]
    points = client.post("/api/organiser/bye", headers=API, json={"name": "A", "points": "2"})
    assert points.status_code == 400
    unknown = client.post("/api/organiser/bye", headers=API, json={"name": "Zed"})
    assert unknown.status_code == 409 and "Zed" in unknown.get_json()["error"]
