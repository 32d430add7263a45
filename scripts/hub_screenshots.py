#!/usr/bin/env python3
"""Make the docs' screenshots of the hub's public pages from the real pages.

Serves the hub's app on loopback over a ledger filled by tests/support/hub_pages.py
(a round of 50 tables mid-play: one game over, one table offline, one never heard
from), and saves:

- docs/img/hub-screen.png: the venue screen (/screen) at 1920 x 1080, dark theme;
- docs/img/hub-standings-phone.png: the standings on a 390 px phone, light theme.

Needs Playwright and Debian's chromium at /usr/bin/chromium (never downloads one).
Usage: ``python scripts/hub_screenshots.py [OUT_DIR] [--tables N]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arbiter.hub.ledger import Ledger  # noqa: E402
from tests.support.hub_pages import populate  # noqa: E402
from tests.support.web import CHROMIUM, CHROMIUM_ARGS, PIN  # noqa: E402
from web.hub import create_hub_app  # noqa: E402
from web.hub.feed import VenueFeed  # noqa: E402
from web.kit.serve import make_server  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=str(ROOT / "docs" / "img"))
    parser.add_argument("--tables", type=int, default=50)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="hub-shots-") as tmp, \
            Ledger(Path(tmp) / "hub.sqlite", "club-night") as ledger:
        populate(ledger, args.tables)
        feed = VenueFeed(ledger, timedelta(minutes=10))
        feed.look_for_silence()
        app = create_hub_app(ledger, feed, tmp, test_config={"ADMIN_PIN": PIN, "TESTING": True})
        server = make_server(app, "127.0.0.1", 0, streams=8)
        threading.Thread(target=server.run, daemon=True).start()
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1920, "height": 1080},
                                        color_scheme="dark")
                page.goto(server.url + "screen")
                page.wait_for_selector('#live[data-state="on"]')
                page.wait_for_timeout(300)  # the opening snapshot's refetch
                page.screenshot(path=str(out / "hub-screen.png"))
                phone = browser.new_page(viewport={"width": 390, "height": 844},
                                         color_scheme="light", device_scale_factor=2)
                phone.goto(server.url + "standings")
                phone.wait_for_selector('#live[data-state="on"]')
                phone.screenshot(path=str(out / "hub-standings-phone.png"))
                browser.close()
        finally:
            server.close()
            feed.stop()
    print(f"saved hub-screen.png and hub-standings-phone.png in {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
