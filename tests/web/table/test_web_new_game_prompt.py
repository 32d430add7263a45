"""The table's status page prompts for NEW GAME once an assignment arrives that the game
on the board was not started with (issue 19, finding 10: such a game is not scored),
and drops the prompt once the status says the game is the assigned one. Real Chromium
and the real status script; the stream is the device's own status with the tournament
fields a table on a broker sends (``assignment``, ``new_game_needed``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.web import build_app, live_server, running_device

pytestmark = pytest.mark.timeout(60)

ASSIGNMENT = {"round": 2, "board": 3, "white": "Ana", "black": "Ben",
              "text": "Round 2 · Ana (White) vs Ben (Black)"}


def test_status_page_prompts_for_new_game_until_the_assigned_game_starts(
    tmp_path: Path, browser: Any
) -> None:
    from playwright.sync_api import expect

    with running_device(tmp_path / "data") as device, \
            live_server(build_app(device), streams=4) as server:
        status = dict(device.status())
        page = browser.new_page()
        feed: dict[str, Any] = {"status": {**status, "assignment": ASSIGNMENT,
                                           "new_game_needed": True, "seq": 10_000}}

        def stream(route: Any) -> None:
            body = f"retry: 200\ndata: {json.dumps(feed['status'])}\n\n"
            route.fulfill(status=200, body=body, headers={"Content-Type": "text/event-stream"})

        page.route("**/api/events", stream)
        page.goto(server.url)
        prompt = page.locator('[data-f="new_game_prompt"]')
        expect(page.locator('[data-f="assignment"]')).to_have_text(ASSIGNMENT["text"])
        expect(prompt).to_be_visible()
        assert "NEW GAME" in prompt.inner_text() and "not be scored" in prompt.inner_text()
        # NEW GAME pressed: the status now says the game on the board is the assigned one.
        feed["status"] = {**feed["status"], "new_game_needed": False, "seq": 10_001}
        expect(prompt).to_be_hidden()
        expect(page.locator('[data-f="assignment"]')).to_be_visible()
