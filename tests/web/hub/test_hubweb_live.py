"""The venue live: a table publishing through a real Mosquitto and the hub's real
ingest reaches the pages over SSE; no rank shows while its game is on (not even a
record sent early), the reveal appears once it is over, and a last will flags the
table. A real browser watches the venue screen change without a reload."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.support.hub_secrecy import AT, RECORD, crawl
from tests.support.waiting import wait_until
from tests.support.web import SseClient, http_get, rank_leaks, venue_states
from tests.web.hub.conftest import Hub, Table

pytestmark = pytest.mark.timeout(90)

def _pair_one_board(hub: Hub) -> tuple[str, str]:
    for name in ("Ana", "Ben"):
        hub.ledger.admin.add_player(name)
    (p,) = hub.ledger.admin.pair_round("round-robin")
    hub.ledger.admin.assign_table(1, 1, "1", "test")
    hub.feed.refresh()
    return p.white, str(p.black)


def _row(sse: SseClient, **want: Any) -> bool:
    """Some table's row, as the page holds it after some message, matched ``want``."""
    return any(all(row.get(k) == v for k, v in want.items())
               for rows in venue_states(sse.events) for row in rows.values())


def test_venue_live_secret_until_over_then_revealed(broker_hub: Hub) -> None:
    hub = broker_hub
    white, black = _pair_one_board(hub)
    sse = SseClient(hub.server.port)
    table = Table(hub.broker.port, "1")  # type: ignore[union-attr]
    try:
        assert sse.wait(lambda s: _row(s, table="1", online=True)), sse.text()
        table.status("idle", 1, 0)
        table.event({"game": 1, "type": "new_game", "at": AT,
                     "assignment": {"round": 1, "board": 1, "white": white, "black": black,
                                    "pairing": hub.ledger.admin.pairings(1)[0].pairing_id}})
        table.event({"game": 1, "type": "challenge", "number": 1, "attacker_side": "W",
                     "result": "attacker", "eliminated": {"W": 0, "B": 1}, "at": AT})
        table.status("result", 1, 1)
        assert sse.wait(lambda s: _row(s, challenges=1, state="result", white=white)), sse.text()
        # A record arriving before the game's end (out of order, or a rogue client)
        # is kept but never shown while the ledger has the game on.
        table.publish("record", {"format": 1, "table": "1", "game": 1, "record": RECORD},
                      retain=True)
        wait_until(lambda: hub.ledger.tables.record("1", "1") is not None)
        fetched = crawl(hub.server, [("1", "1")], "game on, record held early")
        assert fetched > 12
        assert not rank_leaks(sse.text()), rank_leaks(sse.text())
        venue = hub.app.test_client().get("/api/venue").get_json()
        (row,) = venue["tables"]
        assert (row["challenges"], row["lost"], row["over"]) == (1, {"W": 0, "B": 1}, False)

        table.event({"game": 1, "type": "challenge", "number": 2, "attacker_side": "W",
                     "result": "attacker", "eliminated": {"W": 0, "B": 2}, "at": AT + 5})
        table.event({"game": 1, "type": "game_over",
                     "ending": {"kind": "flag_captured", "winner": "W", "at": AT + 5}})
        assert sse.wait(lambda s: _row(s, over=True, result="1-0")), sse.text()
        assert any(e.get("results") for e in sse.events if e.get("type") == "tables")
        status, _h, page = http_get(hub.server, "/games/1/1")
        assert status == 200
        assert "Flag" in page and "Spy" in page and "Flag captured: White wins" in page
        game = hub.app.test_client().get("/api/games/1/1").get_json()
        assert game["reveal"]["sides"][1]["fallen_count"] == 2
        standings = hub.app.test_client().get("/api/standings").get_json()["rows"]
        assert [(r["name"], r["score"]) for r in standings] == [(white, 1.0), (black, 0.0)]
    finally:
        sock = table.client.socket()
        assert sock is not None
        sock.close()  # unclean: the broker publishes the last will
        table.client.loop_stop()
    assert sse.wait(lambda s: _row(s, table="1", online=False)), sse.text()
    sse.close()


def test_venue_flags_a_silent_table(broker_hub: Hub) -> None:
    hub = broker_hub
    _pair_one_board(hub)  # table 1 has a game to play and has never been heard from
    hub.feed.look_for_silence()
    venue = hub.app.test_client().get("/api/venue").get_json()
    assert venue["tables"][0]["silent"] == "no event yet"
    assert "silent: no event yet" in http_get(hub.server, "/")[2]



def test_browser_venue_screen_updates_live(broker_hub: Hub, browser: Any, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    hub = broker_hub
    white, black = _pair_one_board(hub)
    table = Table(hub.broker.port, "1")  # type: ignore[union-attr]
    try:
        table.event({"game": 1, "type": "new_game", "at": AT,
                     "assignment": {"round": 1, "board": 1, "white": white, "black": black,
                                    "pairing": hub.ledger.admin.pairings(1)[0].pairing_id}})
        wait_until(lambda: hub.ledger.events.last_seq("1") == 1)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        problems: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        # The page's stream comes compressed (Chromium accepts gzip): the page stays live
        # through it.
        encodings: list[str | None] = []
        page.on("response", lambda r: encodings.append(r.headers.get("content-encoding"))
                if r.url.endswith("/api/events") else None)
        page.goto(hub.server.url)
        page.wait_for_selector('#live[data-state="on"]')
        card = page.locator('.tcard[data-table="1"]')
        assert card.locator('[data-k="challenges"]').inner_text() == "0"
        marker = page.evaluate("() => { window.__sameDocument = 1; return 1; }")
        for number in (1, 2, 3):
            table.event({"game": 1, "type": "challenge", "number": number,
                         "attacker_side": "W", "result": "attacker",
                         "eliminated": {"W": 0, "B": number}, "at": AT})
            expect(card.locator('[data-k="challenges"]')).to_have_text(str(number))
        assert card.locator('[data-k="lostB"]').inner_text() == "3"
        table.event({"game": 1, "type": "game_over",
                     "ending": {"kind": "resignation", "winner": "B", "at": AT}})
        page.wait_for_selector('.tcard.over [data-k="link"] a')
        assert "Resignation: Black wins" in card.inner_text()
        # Flagged silent when paired (no event yet), cleared once the table spoke.
        assert card.locator('[data-k="silent"]').inner_text() == ""
        assert page.evaluate("window.__sameDocument") == 1, marker  # never reloaded
        assert encodings and set(encodings) == {"gzip"}, encodings
        shot = Path(os.environ.get("HUB_SCREENSHOT", str(tmp_path / "venue.png")))
        page.screenshot(path=str(shot), full_page=True)
        assert not problems, problems
    finally:
        table.close()
