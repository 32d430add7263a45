#!/usr/bin/env python3
"""Make the README's screenshots from the real pages.

Starts a simulator arbiter and its web server on loopback, plays a short game
through the simulator API and the simulator panel, and saves:

- docs/img/status.png: the status page on a phone-sized screen, mid-game;
- docs/img/sim.png: the simulator panel (pieces seated, LEDs lit);
- docs/img/reveal.png: the reveal once a Flag has fallen.

Needs Playwright (the Python package) and Debian's chromium at /usr/bin/chromium;
it never downloads a browser. Usage: ``python scripts/screenshots.py [OUT_DIR]``.
"""

from __future__ import annotations

import http.client
import json
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arbiter.app.assembly import build_arbiter  # noqa: E402
from arbiter.app.config import load_config  # noqa: E402
from tests.support.web import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from web.kit.serve import make_server  # noqa: E402
from web.table import create_app  # noqa: E402

# Quick signals so the script does not wait out the battle phrase and Taps.
FAST_CONFIG = """
[signals]
battle_phrase = false
[tunes]
taps = "Taps:d=16,o=5,b=200:g4,c,e"
"""
OPENING = [
    ("W:SPY", "B:5*G"),
    ("B:PVT", "W:SPY"),
    ("W:PVT", "B:PVT"),
    ("B:MAJ", "W:CPT"),
    ("W:2*G", "B:COL"),
    ("B:SPY", "W:4*G"),
]


class Api:
    """A tiny JSON client for the running server."""

    def __init__(self, port: int) -> None:
        self.port = port

    def call(self, method: str, path: str, body: Any = None) -> Any:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            payload = None if body is None else json.dumps(body)
            conn.request(method, path, body=payload, headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            data = response.read()
            if response.status >= 400:
                raise RuntimeError(f"{method} {path}: {response.status} {data!r}")
            return json.loads(data) if data else None
        finally:
            conn.close()

    def status(self) -> dict[str, Any]:
        return self.call("GET", "/api/status")  # type: ignore[no-any-return]

    def wait(self, test: Any, timeout: float = 10.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            status = self.status()
            if test(status):
                return status
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out; status is {status}")
            time.sleep(0.02)

    def challenge(self, attacker: str, defender: str) -> None:
        count = self.status()["challenge_count"]
        self.call("PUT", "/api/sim/slots/attacker", {"piece": attacker})
        self.call("PUT", "/api/sim/slots/defender", {"piece": defender})
        self.wait(lambda s: s["challenge_count"] > count)
        self.call("DELETE", "/api/sim/slots/attacker")
        self.call("DELETE", "/api/sim/slots/defender")
        self.wait(lambda s: s["state"] in ("idle", "game_over"))


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else ROOT / "docs" / "img"
    out.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        config_path = Path(tmp) / "fast.toml"
        config_path.write_text(FAST_CONFIG, encoding="utf-8")
        device = build_arbiter(load_config(config_path), data_dir=Path(tmp) / "data", sim=True)
        device.start()
        app = create_app(device, {"ADMIN_PIN": "246813"})
        server = make_server(app, "127.0.0.1", 0)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        api = Api(server.port)
        try:
            for attacker, defender in OPENING:
                api.challenge(attacker, defender)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                desktop = browser.new_context(
                    viewport={"width": 1280, "height": 860}, color_scheme="dark"
                )
                phone = browser.new_context(
                    viewport={"width": 390, "height": 844},
                    device_scale_factor=2,
                    is_mobile=True,
                    has_touch=True,
                    color_scheme="dark",
                )

                sim = desktop.new_page()
                sim.goto(server.url + "sim")
                sim.wait_for_selector('select[name="rank"] option[value="SGT"]', state="attached")
                sim.select_option('form[data-slot="attacker"] select[name="side"]', "W")
                sim.select_option('form[data-slot="attacker"] select[name="rank"]', "SGT")
                sim.select_option('form[data-slot="defender"] select[name="side"]', "B")
                sim.select_option('form[data-slot="defender"] select[name="rank"]', "PVT")
                sim.click('form[data-slot="attacker"] button[data-act="seat"]')
                sim.click('form[data-slot="defender"] button[data-act="seat"]')
                sim.wait_for_selector('.led[data-led="attacker"].lit')
                sim.wait_for_selector('.verdict-card[data-verdict="attacker"]')
                sim.screenshot(path=str(out / "sim.png"), full_page=True)

                status = phone.new_page()
                status.goto(server.url)
                status.wait_for_selector('[data-f="connection"][data-conn="live"]')
                status.wait_for_selector('.verdict-card[data-verdict="attacker"]')
                status.screenshot(path=str(out / "status.png"), full_page=True)

                sim.click("#clear-both")
                api.wait(lambda s: s["state"] == "idle")
                api.challenge("W:1LT", "B:FLG")
                game_id = api.status()["game_id"]
                reveal = desktop.new_page()
                reveal.set_viewport_size({"width": 1100, "height": 900})
                reveal.goto(f"{server.url}games/{game_id}")
                reveal.screenshot(path=str(out / "reveal.png"), full_page=True)
                browser.close()
        finally:
            server.close()
            thread.join(timeout=10)
            device.close()
    for name in ("status.png", "sim.png", "reveal.png"):
        print(out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
