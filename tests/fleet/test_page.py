"""The status page shows the tournament: the assignment and the broker link, live."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arbiter.app.assembly import build_arbiter
from arbiter.app.config import load_config
from arbiter.fleet.assignment import Assignment
from arbiter.fleet.state import BrokerState
from tests.fleet.conftest import TableFactory
from tests.support.mqtt import make_tls, tls_mosquitto
from tests.support.tools import require_tool
from tests.support.web import CHROMIUM_ARGS, build_app, live_server

pytestmark = [pytest.mark.timeout(120)]
#: Between the broker's state and its cause in the footer.
DASH = "\u2014"


@pytest.fixture
def tournament_device(tmp_path: Path) -> Iterator[Any]:
    """A simulator device configured for a tournament (its link is not started here)."""
    path = tmp_path / "c.toml"
    path.write_text('[tournament]\nbroker = "mqtt://127.0.0.1:1"\nevent = "demo"\ntable = "7"\n')
    device = build_arbiter(load_config(path), data_dir=tmp_path / "data", sim=True)
    device.start()
    try:
        yield device
    finally:
        device.close()


def test_page_shows_assignment_and_broker_state_live(tournament_device: Any) -> None:
    chromium = require_tool("chromium")
    import playwright.sync_api as sync_api

    fleet = tournament_device.fleet
    with live_server(build_app(tournament_device)) as server, \
            sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            problems: list[str] = []
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.goto(server.url)
            page.wait_for_selector('[data-f="connection"][data-conn="live"]', timeout=10_000)
            assert page.text_content('[data-f="broker"]') == "broker: reconnecting"
            assert page.is_hidden('[data-f="assignment"]')

            fleet.set_assignment(Assignment(3, 5, "Ana", "Ben"))
            fleet.set_broker(BrokerState.CONNECTED)
            page.wait_for_selector('[data-f="broker"]:text-is("broker: connected")',
                                   timeout=10_000)
            page.wait_for_selector(
                '[data-f="assignment"]:text-is("Round 3 · Ana (White) vs Ben (Black)")',
                timeout=10_000)
            assert problems == []
        finally:
            browser.close()


def test_page_without_a_tournament_says_not_configured(tmp_path: Path) -> None:
    device = build_arbiter(load_config(), data_dir=tmp_path / "data", sim=True)
    try:
        html = build_app(device).test_client().get("/").get_data(as_text=True)
    finally:
        device.close()
    assert "broker: not configured" in html


def test_footer_says_why_tls_fails_in_plain_words(
    browser: Any, make_table: TableFactory, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    with tls_mosquitto(tmp_path / "tls-broker", "localhost") as broker:
        other_ca = make_tls(tmp_path / "other").ca  # not the CA that signed the broker's
        table = make_table(broker.tls_url(), extra=f'ca_file = "{other_ca}"\n')
        footer = f"broker: reconnecting {DASH} certificate not signed by the CA file"
        with live_server(build_app(table.arbiter)) as server:
            page = browser.new_page()
            problems: list[str] = []
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.goto(server.url)
            expect(page.locator('[data-f="broker"]')).to_have_text(footer, timeout=30_000)
            # Served that way too, before any script runs; and naming no host.
            html = build_app(table.arbiter).test_client().get("/").get_data(as_text=True)
            assert footer in html
            assert "localhost" not in footer and str(broker.tls_port) not in footer
            table.arbiter.fleet.set_broker(BrokerState.CONNECTED)
            expect(page.locator('[data-f="broker"]')).to_have_text("broker: connected")
            assert problems == []
