"""The secrecy crawler: no rank leaves the arbiter while a game is on.

A game is played through the simulator API of a real waitress server. After
every step (one piece seated, both seated and judged, refusals) every public
route is fetched and the event stream is read, and nothing may hold a rank
code, a rank's name or a piece in text. Only ``/api/sim/ranks`` (the picker's
fixed list of the fifteen ranks, the same before, during and after a game)
is left out, and it is checked to be exactly that. When a Flag falls, the
reveal must show the ranks.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import web.table
from tests.support.waiting import wait_until
from tests.support.web import (
    SseClient,
    build_app,
    http_get,
    http_json,
    live_server,
    rank_leaks,
)

pytestmark = pytest.mark.timeout(120)

STATIC_DIR = Path(web.table.__file__).parent / "static"
PICKER_LIST = "/api/sim/ranks"

#: (attacker, defender, what happens). Spies, privates, splits, refusals, then a Flag falls.
GAME = [
    ("W:SPY", "B:5*G", "attacker"),
    ("B:PVT", "W:SPY", "attacker"),
    ("W:PVT", "B:PVT", "split"),
    ("W:SPY", "B:SPY", "split"),
    ("B:MAJ", "W:CPT", "attacker"),
    ("W:SGT", "B:PVT", "attacker"),
    ("W:PVT", "W:SGT", "refused"),  # same side
    ("W:COL", "B:5*G", "refused"),  # that General of the Army fell in challenge 1
    ("B:2LT", "W:1*G", "defender"),
]
FINAL = ("W:1LT", "B:FLG", "attacker")


def _public_paths(game_id: int) -> list[str]:
    paths = [
        "/",
        "/api/status",
        "/games",
        f"/games/{game_id}",
        "/api/games",
        f"/api/games/{game_id}",
        "/sim",
        "/api/sim/outputs",
        "/api/sim/tunes",
        "/admin/login",
        "/admin",
    ]
    paths += [f"/static/{p.name}" for p in sorted(STATIC_DIR.iterdir()) if p.is_file()]
    return paths


def _crawl(server: Any, game_id: int, step: str) -> int:
    """Fetch every public route; assert no rank anywhere. Returns the count fetched."""
    fetched = 0
    for path in _public_paths(game_id):
        status, headers, body = http_get(server, path)
        assert status < 500, f"{path} answered {status} at {step}"
        leaks = rank_leaks(body) + rank_leaks(" ".join(f"{k}: {v}" for k, v in headers.items()))
        assert not leaks, f"{path} shows {leaks} while the game is on ({step})"
        fetched += 1
    return fetched


def _status(server: Any) -> dict[str, Any]:
    return http_json(server, "GET", "/api/status")[1]  # type: ignore[no-any-return]


@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
def test_secrecy_crawler_no_rank_while_on_then_reveal(device: Any) -> None:
    app = build_app(device)
    with live_server(app) as server:
        stream = SseClient(server.port)
        try:
            assert stream.wait(lambda s: len(s.events) >= 1, 10)
            game_id = _status(server)["game_id"]
            picker = http_get(server, PICKER_LIST)[2]
            crawled = _crawl(server, game_id, "before the first challenge")

            def seat(slot: str, piece: str) -> None:
                code, body = http_json(server, "PUT", f"/api/sim/slots/{slot}", {"piece": piece})
                assert code == 200 and not rank_leaks(str(body))

            def clear() -> None:
                for slot in ("attacker", "defender"):
                    assert http_json(server, "DELETE", f"/api/sim/slots/{slot}")[0] == 200
                wait_until(
                    lambda: _status(server)["slots"] == {"attacker": "empty", "defender": "empty"}
                )
                wait_until(lambda: _status(server)["state"] == "idle")

            for number, (attacker, defender, outcome) in enumerate(GAME, 1):
                before = _status(server)
                seat("attacker", attacker)
                wait_until(lambda: _status(server)["slots"]["attacker"] == "present")
                crawled += _crawl(server, game_id, f"step {number}: {attacker} seated")
                seat("defender", defender)
                if outcome == "refused":
                    wait_until(lambda: _status(server)["message"])
                    assert _status(server)["challenge_count"] == before["challenge_count"]
                else:
                    count = before["challenge_count"]

                    def judged(count: int = count) -> dict[str, Any] | None:
                        s = _status(server)
                        done = s["challenge_count"] > count and s["state"] == "result"
                        return s if done else None

                    after = wait_until(judged)
                    assert after is not None and after["last_verdict"] == outcome
                crawled += _crawl(server, game_id, f"step {number}: {attacker} vs {defender}")
                clear()
                crawled += _crawl(server, game_id, f"step {number}: slots emptied")

            # The stream so far: every status while the game was on, rank-free.
            assert stream.wait(lambda s: s.events[-1]["state"] == "idle", 10)
            assert all(e["ending"] is None for e in stream.events)
            assert not rank_leaks(stream.text()), "the event stream named a rank"
            assert len(stream.events) >= 3 * len(GAME)
            assert http_get(server, PICKER_LIST)[2] == picker  # the fixed list, nothing more

            # A Flag falls: the game is over and the reveal shows the ranks.
            seat("attacker", FINAL[0])
            seat("defender", FINAL[1])
            wait_until(lambda: _status(server)["state"] == "game_over")
            status, _, reveal = http_get(server, f"/games/{game_id}")
            assert status == 200
            assert "General of the Army" in reveal and "Spy" in reveal and "Flag" in reveal
            assert "Flag captured: White wins" in reveal
            code, record = http_json(server, "GET", f"/api/games/{game_id}")
            assert code == 200
            assert [c["attacker"] for c in record["challenges"]][:2] == ["W:SPY", "B:PVT"]
            assert record["challenges"][-1]["defender"] == "B:FLG"
            assert "B:5*G" in record["fallen"]["B"] and "W:SPY" in record["fallen"]["W"]
            assert stream.wait(lambda s: s.events[-1]["state"] == "game_over", 10)
            print(f"\ncrawled {crawled} responses and {len(stream.events)} stream events")
        finally:
            stream.close()


def test_secrecy_picker_list_is_the_only_rank_list(device: Any) -> None:
    """The one excluded route holds the rule table and nothing about the game."""
    client = build_app(device).test_client()
    before = client.get(PICKER_LIST).get_data()
    client.put("/api/sim/slots/attacker", json={"piece": "W:SPY"})
    wait_until(lambda: client.get("/api/status").json["slots"]["attacker"] == "present")
    assert client.get(PICKER_LIST).get_data() == before
    assert set(client.get(PICKER_LIST).json) == {"sides", "ranks"}


def test_secrecy_detector_catches_leaks() -> None:
    """The crawler's detector must see every way a rank could be written."""
    for text in [
        "W:SPY",
        "b:pvt",
        "B: 5*G",
        "the Spy",
        "a private",
        "General of the Army",
        "code 1LT",
        "(FLG)",
        "Lieutenant Colonel",
        "MAJ",
    ]:
        assert rank_leaks(text), text
    for text in [
        "Salpakan Arbiter",
        "Game of the Generals",
        "split",
        "flag_captured",
        "attacker survives",
        "seq 15",
        "keep-alive",
        "#1*",
    ]:
        assert not rank_leaks(text), text
