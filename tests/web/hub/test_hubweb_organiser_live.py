"""The organiser page live, in a real browser, fed by a real Mosquitto and the hub's real
ingest: a table's challenges, its going offline (last will) and coming back, a sequence
gap, a refused message and a correction made elsewhere all show without a reload, and
what the organiser is typing meanwhile stays as typed."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.hub_secrecy import AT
from tests.support.web import PIN, http_json
from tests.web.hub.conftest import Hub, Table

pytestmark = pytest.mark.timeout(90)

#: Milliseconds a page assertion waits for the page to show what it expects.
SHOWN = 15_000



def test_organiser_page_follows_the_venue_and_keeps_what_is_typed(
    broker_hub: Hub, browser: Any,
) -> None:
    from playwright.sync_api import expect

    expect.set_options(timeout=SHOWN)
    hub = broker_hub
    # Refused messages are not on the public stream: the page looks for them this often.
    hub.app.config["ORGANISER_POLL_SECONDS"] = 1
    for name in ("Ana", "Ben", "Cy", "Di"):
        hub.ledger.admin.add_player(name)
    hub.ledger.admin.pair_round("round-robin")
    hub.ledger.admin.assign_table(1, 1, "1", "test")
    (p1,) = [r.pairing for r in hub.ledger.admin.pairings(1) if r.pairing.board == 1]
    table = Table(hub.broker.port, "1")  # type: ignore[union-attr]
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    try:
        page.goto(hub.server.url + "/organiser")
        page.fill('input[name="pin"]', PIN)
        page.click('button:has-text("Log in")')
        expect(page.locator('#live[data-state="on"]')).to_be_visible()
        row = page.locator('#org-tables tr[data-table="1"]')
        expect(row).to_contain_text("online")
        page.evaluate("() => { window.__sameDocument = 1; }")
        # The organiser starts moving board 2 to table 7 and is typing a new player.
        board2 = page.locator('#rounds-live input[name="table-2"]')
        board2.fill("7")
        name = page.locator('form[data-key="add-player"] input[name="name"]')
        name.fill("Zed")
        board2.focus()  # the cursor in a part that is swapped
        swaps = int(page.evaluate("() => Number(document.body.dataset.swaps || 0)"))

        table.event({"game": 1, "type": "new_game", "at": AT,
                     "assignment": {"round": 1, "board": 1, "white": p1.white,
                                    "black": p1.black,
                                    "pairing": hub.ledger.admin.pairings(1)[0].pairing_id}})
        table.event({"game": 1, "type": "challenge", "number": 1, "attacker_side": "W",
                     "result": "attacker", "eliminated": {"W": 0, "B": 1}, "at": AT})
        expect(row.locator("td").nth(4)).to_have_text("1")  # challenges
        expect(row).to_contain_text(f"{p1.white} – {p1.black}")
        # A sequence gap: events 3 and 4 never came.
        table.seq += 2
        table.event({"game": 1, "type": "challenge", "number": 4, "attacker_side": "B",
                     "result": "defender", "eliminated": {"W": 0, "B": 2}, "at": AT})
        attention = page.locator("#attention")
        expect(attention.locator(".gap")).to_contain_text("Table 1 events missing: 3–4")
        # A refused message: a status naming another table.
        table.publish("status", {"format": 1, "table": "9", "state": "idle"})
        expect(attention.locator(".rejection")).to_contain_text(
            "table 1 refused: status: the payload names table '9'")
        # Offline (its last will), flagged silent; then back, and the flag cleared.
        sock = table.client.socket()
        assert sock is not None
        sock.close()
        table.client.loop_stop()
        expect(row).to_contain_text("offline")
        expect(attention).to_contain_text("Table 1 silent: offline")
        back = Table(hub.broker.port, "1")  # type: ignore[union-attr]
        try:
            expect(row).to_contain_text("online")
            expect(attention).not_to_contain_text("silent")
            # A correction made by another organiser (the JSON API) reaches the log.
            status, answer = http_json(hub.server, "POST", "/api/organiser/result",
                                       {"round": 1, "board": 1, "result": "0-1", "who": "chief"},
                                       {"X-Admin-PIN": PIN})
            assert status == 200, answer
            expect(page.locator("#audit")).to_contain_text("chief")
            expect(page.locator('#rounds-live tr[data-board="1"] td.res')).to_contain_text("0-1")
        finally:
            back.close()
        assert int(page.evaluate("() => Number(document.body.dataset.swaps)")) > swaps
        # Through every swap: what was typed is still there, and the focus too.
        assert board2.input_value() == "7"
        assert name.input_value() == "Zed"
        assert page.evaluate("document.activeElement.name") == "table-2"
        assert page.evaluate("window.__sameDocument") == 1  # never reloaded

        # A button held down in a live part is not swapped away under the pointer:
        # the update waits for the release, and the click counts.
        withdraw = page.locator('#players-list tr[data-player="Cy"] button')
        withdraw.hover()
        page.mouse.down()
        status, answer = http_json(hub.server, "POST", "/api/organiser/players",
                                   {"name": "Eve"}, {"X-Admin-PIN": PIN})
        assert status == 200, answer
        expect(page.locator('body[data-held="1"]')).to_have_count(1)
        assert "Eve" not in page.locator("#players-list").inner_text()
        page.mouse.up()
        expect(page.locator(".flash")).to_have_text("Cy withdrawn")
        expect(page.locator('#players-list tr[data-player="Eve"]')).to_have_count(1)
        assert not problems, problems
    finally:
        page.close()
