"""A real browser (Debian's chromium through Playwright) against the live server.

Seats two pieces from the simulator panel and watches the status page and
the virtual LEDs change without a reload; the pages must run under their own
Content-Security-Policy with no error in the console.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.waiting import wait_until
from tests.support.web import (
    SseClient,
    build_app,
    http_json,
    live_server,
)

pytestmark = [pytest.mark.timeout(120)]




def _watch_console(page: Any, problems: list[str]) -> None:
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))


def test_browser_sim_panel_seats_pieces_and_pages_update_live(
    device: Any, browser: Any, tmp_path: Path
) -> None:
    with live_server(build_app(device)) as server:
        problems: list[str] = []
        context = browser.new_context(viewport={"width": 1200, "height": 900})
        status_page = context.new_page()
        _watch_console(status_page, problems)
        status_page.goto(server.url)
        status_page.wait_for_selector('[data-f="connection"][data-conn="live"]', timeout=10_000)
        assert status_page.text_content('[data-f="state_word"]') == "Ready"
        status_page.evaluate("window.__notReloaded = true")

        sim = context.new_page()
        _watch_console(sim, problems)
        sim.goto(server.url + "sim")
        sim.wait_for_selector(
            'form[data-slot="attacker"] select[name="rank"] option[value="SPY"]',
            state="attached",
            timeout=10_000,
        )
        sim.evaluate("window.__notReloaded = true")

        sim.select_option('form[data-slot="attacker"] select[name="side"]', "W")
        sim.select_option('form[data-slot="attacker"] select[name="rank"]', "SPY")
        sim.select_option('form[data-slot="defender"] select[name="side"]', "B")
        sim.select_option('form[data-slot="defender"] select[name="rank"]', "5*G")
        sim.click('form[data-slot="attacker"] button[data-act="seat"]')
        status_page.wait_for_selector(
            '.slot[data-slot="attacker"][data-slot-state="present"]', timeout=10_000
        )
        sim.click('form[data-slot="defender"] button[data-act="seat"]')

        # The verdict reaches both pages over the event stream, with no reload.
        status_page.wait_for_selector('.verdict-card[data-verdict="attacker"]', timeout=10_000)
        assert status_page.text_content('[data-f="verdict_word"]') == "Attacker survives"
        assert status_page.text_content('[data-f="eliminated_B"]') == "1"
        assert status_page.text_content('[data-f="challenge_count"]') == "1"
        sim.wait_for_selector('.verdict-card[data-verdict="attacker"]', timeout=10_000)

        # The virtual LEDs follow the device: the attacker's is lit, the defender's dark.
        sim.wait_for_selector('.led[data-led="attacker"][data-mode="on"]', timeout=10_000)
        sim.wait_for_selector('.led[data-led="attacker"].lit', timeout=10_000)
        assert sim.get_attribute('.led[data-led="defender"]', "data-mode") == "off"

        # The status page never shows what the simulator's user picked.
        status_text = status_page.inner_text("body")
        assert "Spy" not in status_text and "General" not in status_text
        assert "Spy" in sim.inner_text('form[data-slot="attacker"] [data-f="picked"]')

        assert status_page.evaluate("window.__notReloaded") is True
        assert sim.evaluate("window.__notReloaded") is True

        shot = tmp_path / "sim.png"
        sim.screenshot(path=str(shot), full_page=True)
        data = shot.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5_000
        context.close()
        assert not problems, f"browser console errors: {problems}"


def test_browser_sim_panel_keeps_its_own_pick_over_a_stale_slots_answer(
    device: Any, browser: Any, tmp_path: Path
) -> None:
    """A slots poll answered from before this browser seated a piece must not undo it."""

    def slots_poll(request: Any) -> bool:
        return bool(request.method == "GET" and request.url.endswith("/api/sim/slots"))

    with live_server(build_app(device)) as server:
        page = browser.new_context().new_page()
        held: list[Any] = []

        def hold_first_poll(route: Any) -> None:
            if route.request.method == "GET" and not held:
                held.append((route, route.fetch()))  # the device's slots at this moment
            else:
                route.continue_()

        page.goto(server.url + "sim")
        page.wait_for_selector(
            'form[data-slot="attacker"] select[name="rank"] option[value="SPY"]',
            state="attached",
            timeout=10_000,
        )
        page.route("**/api/sim/slots", hold_first_poll)
        # The panel's next poll is held, its answer says "empty". Not expect_request: a poll
        # sent between the route and the waiter is held unseen, and no other poll follows
        # a pending one. The route's handler runs while Playwright waits: wait in steps.
        deadline = time.monotonic() + 10
        while not held:
            assert time.monotonic() < deadline, "no slots poll came to be held"
            page.wait_for_timeout(20)
        page.select_option('form[data-slot="attacker"] select[name="side"]', "W")
        page.select_option('form[data-slot="attacker"] select[name="rank"]', "SPY")
        page.click('form[data-slot="attacker"] button[data-act="seat"]')
        # A selector, not wait_for_function: the page's CSP forbids the eval that polls it.
        page.wait_for_selector(
            'form[data-slot="attacker"] [data-f="picked"]:has-text("Spy")', timeout=10_000
        )
        route, stale = held[0]
        # The stale answer arrives now; the poll after it proves the page has handled it.
        with page.expect_request(slots_poll, timeout=10_000):
            route.fulfill(response=stale)
        assert "Spy" in page.inner_text('form[data-slot="attacker"] [data-f="picked"]')


def test_browser_page_refused_a_stream_polls_then_streams_when_capacity_frees(
    device: Any, browser: Any
) -> None:
    """Issue 8.3: beyond the stream capacity the page polls, and streams once a place frees."""
    app = build_app(device, SSE_KEEPALIVE=0.3, STREAM_RETRY_SECONDS=1)
    hub = app.extensions["arbiter_streams"]
    with live_server(app, streams=1) as server:
        held = SseClient(server.port)  # another viewer holds the only stream
        assert held.wait(lambda s: len(s.events) >= 1, 10)
        problems: list[str] = []
        context = browser.new_context()
        page = context.new_page()
        _watch_console(page, problems)
        page.goto(server.url)
        page.wait_for_selector('[data-f="connection"][data-conn="polling"]', timeout=10_000)

        # a change reaches the page while its stream is refused: by polling alone
        assert http_json(server, "PUT", "/api/sim/slots/attacker", {"piece": "W:PVT"})[0] == 200
        page.wait_for_selector(
            '.slot[data-slot="attacker"][data-slot-state="present"]', timeout=10_000
        )
        assert hub.open_streams == 1  # still only the other viewer's

        held.close()  # its place frees: the page's next try gets the stream
        page.wait_for_selector('[data-f="connection"][data-conn="live"]', timeout=15_000)
        wait_until(lambda: hub.open_streams == 1, what="the page's own stream open")
        assert http_json(server, "DELETE", "/api/sim/slots/attacker")[0] in (200, 204)
        page.wait_for_selector(
            '.slot[data-slot="attacker"][data-slot-state="empty"]', timeout=10_000
        )
        context.close()
    # the browser reports each refused stream (503) as a failed load; nothing else may fail
    others = [p for p in problems if "503" not in p]
    assert not others, f"browser console errors: {others}"
