"""NEW GAME on the table's page and API (issue 27 item 9): over a game with challenges
played it asks to be confirmed (behind the PIN, as every admin action), and the abandoned
game's record stays secret on every public page and JSON until the next game has begun."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.support.waiting import wait_until
from tests.support.web import PIN, admin_login, build_app, http_get, live_server, rank_leaks

ADMIN = {"X-Admin-PIN": PIN}
PUBLIC = ("/", "/api/status", "/games", "/games/1", "/api/games", "/api/games/1",
          "/api/sim/outputs", "/admin/login")


@pytest.fixture
def client(device: Any) -> Any:
    return build_app(device).test_client()


def _play(client: Any, attacker: str, defender: str) -> None:
    before = client.get("/api/status").json["challenge_count"]
    client.put("/api/sim/slots/attacker", json={"piece": attacker})
    client.put("/api/sim/slots/defender", json={"piece": defender})
    wait_until(lambda: client.get("/api/status").json["challenge_count"] == before + 1,
               what="the challenge counted")
    client.delete("/api/sim/slots/attacker")
    client.delete("/api/sim/slots/defender")
    wait_until(lambda: client.get("/api/status").json["state"] in ("idle", "game_over"),
               what="the slots emptied")


def _leaks(client: Any) -> list[tuple[str, list[str]]]:
    out = []
    for path in PUBLIC:
        response = client.get(path)
        assert response.status_code < 500, path
        if found := rank_leaks(response.get_data(as_text=True)):
            out.append((path, found))
    return out


def test_api_new_game_over_a_game_on_wants_its_id(client: Any) -> None:
    _play(client, "W:SPY", "B:5*G")
    refused = client.post("/api/games", headers=ADMIN)
    assert refused.status_code == 409
    assert refused.json["abandon"] == 1 and '{"abandon": 1}' in refused.json["error"]
    assert client.post("/api/games", json={"abandon": 7}, headers=ADMIN).status_code == 409
    assert client.post("/api/games", json={"abandon": "one"}, headers=ADMIN).status_code == 400
    assert client.post("/api/games", json={"abandon": True}, headers=ADMIN).status_code == 400
    assert client.post("/api/games", json={"abandon": 1}).status_code == 401  # the PIN first
    status = client.get("/api/status").json
    assert (status["game_id"], status["challenge_count"]) == (1, 1)  # nothing changed
    started = client.post("/api/games", json={"abandon": 1}, headers=ADMIN)
    assert started.status_code == 201 and started.json["game_id"] == 2
    # A game over (or not begun) needs no confirmation: nothing is abandoned.
    assert client.post("/api/games", headers=ADMIN).status_code == 201


def test_abandoned_record_secret_until_the_next_games_first_challenge(client: Any) -> None:
    _play(client, "W:SPY", "B:5*G")
    _play(client, "B:PVT", "W:SPY")
    assert client.post("/api/games", json={"abandon": 1}, headers=ADMIN).status_code == 201
    sealed = client.get("/api/games/1")
    assert sealed.status_code == 403 and "abandoned" in sealed.json["error"]
    page = client.get("/games/1")
    assert page.status_code == 403 and "was abandoned" in page.get_data(as_text=True)
    listed = client.get("/api/games").json["games"]
    assert [(g["id"], g["over"], g["sealed"]) for g in listed] == [(2, False, True),
                                                                   (1, True, True)]
    assert "secret until the next game has begun" in client.get("/games").get_data(True)
    assert _leaks(client) == []
    _play(client, "W:COL", "B:MAJ")  # the next game has begun
    revealed = client.get("/api/games/1")
    assert revealed.status_code == 200
    assert [c["defender"] for c in revealed.json["challenges"]] == ["B:5*G", "W:SPY"]
    assert client.get("/games/1").status_code == 200


def test_api_reveal_by_the_players_word(client: Any) -> None:
    _play(client, "W:SPY", "B:5*G")
    client.post("/api/games", json={"abandon": 1}, headers=ADMIN)
    assert client.post("/api/games/reveal").status_code == 401
    response = client.post("/api/games/reveal", headers=ADMIN)
    assert response.status_code == 200 and response.json == {"revealed": [1]}
    assert client.get("/api/games/1").status_code == 200
    assert client.post("/api/games/reveal", headers=ADMIN).json == {"revealed": []}


def test_admin_page_asks_before_it_abandons(client: Any) -> None:
    _play(client, "W:SPY", "B:5*G")
    token = admin_login(client)
    asked = client.post("/admin/new-game", data={"csrf": token})
    html = asked.get_data(as_text=True)
    assert asked.status_code == 200 and "Abandon game 1?" in html
    assert '<input type="hidden" name="abandon" value="1">' in html
    assert client.get("/api/status").json["game_id"] == 1  # one click changed nothing
    done = client.post("/admin/new-game", data={"csrf": token, "abandon": "1"},
                       follow_redirects=True)
    assert "Game 2 started." in done.get_data(as_text=True)
    admin = client.get("/admin").get_data(as_text=True)
    assert 'id="sealed"' in admin and "Game 1 ended by NEW GAME" in admin
    revealed = client.post("/admin/reveal", data={"csrf": token}, follow_redirects=True)
    assert "Game 1 revealed." in revealed.get_data(as_text=True)
    assert 'id="sealed"' not in client.get("/admin").get_data(as_text=True)


def test_admin_page_stale_confirmation_abandons_nothing(client: Any) -> None:
    _play(client, "W:SPY", "B:5*G")
    token = admin_login(client)
    client.post("/api/games", json={"abandon": 1}, headers=ADMIN)  # someone else, meanwhile
    _play(client, "B:COL", "W:MAJ")  # and game 2 is on
    stale = client.post("/admin/new-game", data={"csrf": token, "abandon": "1"},
                        follow_redirects=True)
    assert "Abandon game 2?" in stale.get_data(as_text=True)  # asked again, for game 2
    assert client.get("/api/status").json["game_id"] == 2
    assert client.post("/admin/new-game", data={"csrf": "nope", "abandon": "2"}).status_code \
        in (400, 403)  # CSRF, as every admin form


def test_abandoned_secret_over_http_on_every_public_route(device: Any) -> None:
    """The same on a real server, every public route including the static files."""
    client = build_app(device).test_client()
    _play(client, "W:SPY", "B:5*G")
    client.post("/api/games", json={"abandon": 1}, headers=ADMIN)
    with live_server(build_app(device), streams=4) as server:
        statics = re.findall(r'/static/[\w.-]+', client.get("/").get_data(as_text=True))
        for path in (*PUBLIC, "/sim", *statics):
            status, _headers, body = http_get(server, path)
            assert status < 500 and rank_leaks(body) == [], (path, status)
