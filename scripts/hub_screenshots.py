#!/usr/bin/env python3
"""Make the docs' screenshots of the hub's public pages from the real pages.

Serves the hub's app on loopback as ``gg-arbiter hub`` serves it (web.kit.aserve's
asynchronous server, in the hub's declared web thread) over a ledger filled by
tests/support/hub_pages.py
(a round mid-play: one game over, one table offline, one never heard from; names of
about 20 letters on the screens), and saves:

- docs/img/hub-screen-4.png, -8.png, -50.png: the venue screen (/screen) of 4, 8 and
  50 tables at 1920 x 1080, dark theme;
- docs/img/hub-standings-phone.png: the standings of 50 tables' players on a 390 px
  phone, light theme.

Needs Playwright and Debian's chromium at /usr/bin/chromium (never downloads one).
Usage: ``python scripts/hub_screenshots.py [OUT_DIR] [--tables N ...]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arbiter.app.commands.hub import WEB  # noqa: E402
from arbiter.hub.ledger import Ledger  # noqa: E402
from arbiter.threads import BackgroundThread  # noqa: E402
from tests.support.hub_pages import long_names, populate  # noqa: E402
from tests.support.web import CHROMIUM, CHROMIUM_ARGS, PIN  # noqa: E402
from web.hub import create_hub_app  # noqa: E402
from web.hub.feed import VenueFeed  # noqa: E402
from web.kit.aserve import make_async_server  # noqa: E402

#: The venue screens shown in the manual: a club night, a small open, a big one.
SCREENS = (4, 8, 50)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=str(ROOT / "docs" / "img"))
    parser.add_argument("--tables", type=int, nargs="+", default=list(SCREENS))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for tables in args.tables:
                with served(tables, long_names(2 * tables)) as url:
                    page = browser.new_page(viewport={"width": 1920, "height": 1080},
                                            color_scheme="dark")
                    page.goto(url + "screen")
                    page.wait_for_selector('#live[data-state="on"]')
                    page.wait_for_timeout(300)  # the opening snapshot's refetch
                    page.screenshot(path=str(out / f"hub-screen-{tables}.png"))
                    print(f"saved hub-screen-{tables}.png in {out}")
            with served(50, None) as url:
                phone = browser.new_page(viewport={"width": 390, "height": 844},
                                         color_scheme="light", device_scale_factor=2)
                phone.goto(url + "standings")
                phone.wait_for_selector('#live[data-state="on"]')
                phone.screenshot(path=str(out / "hub-standings-phone.png"))
                print(f"saved hub-standings-phone.png in {out}")
        finally:
            browser.close()
    return 0


@contextmanager
def served(tables: int, names: list[str] | None) -> Iterator[str]:
    """A hub over a populated ledger of ``tables`` tables, on loopback; yields its URL."""
    with tempfile.TemporaryDirectory(prefix="hub-shots-") as tmp, \
            Ledger(Path(tmp) / "hub.sqlite", "club-night") as ledger:
        populate(ledger, tables, names)
        feed = VenueFeed(ledger, timedelta(minutes=10))
        feed.look_for_silence()
        app = create_hub_app(ledger, feed, tmp, test_config={"ADMIN_PIN": PIN, "TESTING": True})
        server = make_async_server(app, "127.0.0.1", 0, streams=8)
        web = BackgroundThread(lambda _stopping: server.run(), WEB, wake=server.close)
        try:
            web.start()
            if not server.wait_serving(30.0):
                raise SystemExit(f"the hub's pages on {server.url} did not start")
            yield server.url
        finally:
            web.stop()
            server.close()  # also when its thread never started
            feed.stop()


if __name__ == "__main__":
    raise SystemExit(main())
