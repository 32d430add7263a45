"""axe-core (npm, tests/a11y/package-lock.json) over every public page of the table and
of the hub, in the light and the dark theme, in real Chromium: no violation at all.

The hub's venue is mid-round with a game over, a table offline and one never heard
from (silent, its link unknown): the states whose badges must stand out and still pass
contrast. The table's status page is mid-game and its reveal is of a finished game.
A page that breaks a rule (a low-contrast label, an image without text, a field
without a label) fails here; ``test_axe_catches_a_violation`` proves the check bites.
"""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.hub_pages import served_venue
from tests.support.tools import missing
from tests.support.web import build_app, live_server, running_device

pytestmark = pytest.mark.timeout(180)

AXE = Path(__file__).parent / "node_modules" / "axe-core" / "axe.min.js"
THEMES = ("light", "dark")
HUB_PAGES = ("/", "/screen", "/rounds", "/standings", "/games", "/games/1/1",
             "/organiser/login")
TABLE_PAGES = ("/", "/games", "/games/1")


@pytest.fixture(scope="module")
def axe_source() -> str:
    if not AXE.exists():
        missing(f"{AXE} missing: bash setup.sh --dev runs npm ci in tests/a11y")
    return AXE.read_text(encoding="utf-8")


def violations(page: Any, axe: str) -> list[str]:
    """Every axe violation on ``page`` (WCAG 2.x A and AA and best practice), one line each."""
    page.add_script_tag(content=axe)
    found = page.evaluate("""async () => {
        const r = await axe.run(document, {resultTypes: ['violations']});
        return r.violations.map(v => v.id + ' (' + v.impact + '): ' + v.help + ' at ' +
            v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', ') +
            (v.nodes.length > 3 ? ' and ' + (v.nodes.length - 3) + ' more' : ''));
    }""")
    return list(found)


def check(browser: Any, url: str, axe: str, ready: str, widths: tuple[int, ...]) -> list[str]:
    problems = []
    for theme in THEMES:
        for width in widths:
            # bypass_csp: the pages' CSP (script-src 'self') would refuse axe's inline script.
            context = browser.new_context(viewport={"width": width, "height": 900},
                                          color_scheme=theme, bypass_csp=True)
            page = context.new_page()
            page.goto(url)
            page.wait_for_selector(ready, state="attached")
            page.wait_for_timeout(200)  # a live page's first refetch of its main part
            problems += [f"{url} [{theme}, {width} px] {v}" for v in violations(page, axe)]
            context.close()
    return problems


@pytest.fixture
def hub_server(tmp_path: Path) -> Iterator[Any]:
    with served_venue(tmp_path, 12) as server:
        yield server


def test_hub_public_pages_pass_axe_in_both_themes(
    hub_server: Any, browser: Any, axe_source: str
) -> None:
    problems: list[str] = []
    for path in HUB_PAGES:
        widths = (1920,) if path == "/screen" else (390, 1280)
        problems += check(browser, hub_server.url.rstrip("/") + path, axe_source, "main",
                          widths)
    assert not problems, "\n".join(problems)


def _sim(port: int, method: str, path: str, body: Any = None) -> Any:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(method, path, body=None if body is None else json.dumps(body),
                     headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        data = response.read()
        assert response.status < 400, (method, path, data)
        return json.loads(data) if data else None
    finally:
        conn.close()


def _challenge(port: int, attacker: str, defender: str) -> None:
    before = _sim(port, "GET", "/api/status")["challenge_count"]
    _sim(port, "PUT", "/api/sim/slots/attacker", {"piece": attacker})
    _sim(port, "PUT", "/api/sim/slots/defender", {"piece": defender})
    deadline = time.monotonic() + 10
    while _sim(port, "GET", "/api/status")["challenge_count"] == before:
        assert time.monotonic() < deadline, "no verdict"
        time.sleep(0.02)
    _sim(port, "DELETE", "/api/sim/slots/attacker")
    _sim(port, "DELETE", "/api/sim/slots/defender")


def test_table_public_pages_pass_axe_in_both_themes(
    tmp_path: Path, browser: Any, axe_source: str
) -> None:
    with running_device(tmp_path / "data") as device, \
            live_server(build_app(device), streams=8) as server:
        _challenge(server.port, "W:SPY", "B:5*G")
        _challenge(server.port, "W:PVT", "B:FLG")  # game 1 over: its reveal is public
        base = server.url.rstrip("/")
        problems = check(browser, base + "/", axe_source, "main", (390, 1280))
        for path in TABLE_PAGES[1:]:
            problems += check(browser, base + path, axe_source, "main", (390, 1280))
    assert not problems, "\n".join(problems)


def test_axe_catches_a_violation(browser: Any, axe_source: str) -> None:
    page = browser.new_page()
    page.set_content('<!doctype html><html lang="en"><head><title>t</title></head><body>'
                     '<main><p style="color:#999;background:#aaa">grey on grey</p>'
                     '<input type="text"></main></body></html>')
    found = violations(page, axe_source)
    assert any(v.startswith("color-contrast") for v in found), found
    assert any(v.startswith("label") for v in found), found
