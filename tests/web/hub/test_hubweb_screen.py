"""What people see of the venue, in real Chromium (issue 19, Deliver 4):

- the venue screen (/screen) at 1920 x 1080 holds 50 tables without scrolling, with
  text 24 px and more, and pages to the rest by itself (a fake clock moves it on);
- an offline table is not faded: it carries the word OFFLINE on a solid badge, a silent
  one the word SILENT, a table never heard of UNKNOWN;
- Black's dot has a ring the card's background does not swallow, in the dark theme too;
- at 390 px the standings show every column (none cut off or scrolled away).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.hub_pages import served_venue

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def venue_60(tmp_path: Path) -> Iterator[Any]:
    with served_venue(tmp_path, 60) as server:
        yield server


def test_venue_screen_fits_50_tables_and_pages_to_the_rest(venue_60: Any, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1920, "height": 1080}, color_scheme="dark")
    page.clock.install()
    page.goto(venue_60.url + "screen")
    page.wait_for_selector('#live[data-state="on"]')
    shown = page.locator(".tcard:not([hidden])")
    assert shown.count() == 50
    assert page.locator("#screen-page").inner_text() == "page 1 of 2"
    # Every card measured in one layout pass (not one round trip each, which a live patch
    # re-rendering the cards could fall between).
    boxes = page.evaluate("""() => Array.from(document.querySelectorAll('.tcard:not([hidden])'))
        .map(e => { const r = e.getBoundingClientRect();
                    return {table: e.dataset.table, y: r.y, height: r.height}; })""")
    assert len(boxes) == 50
    assert all(b["y"] + b["height"] <= 1080 for b in boxes), [
        b for b in boxes if b["y"] + b["height"] > 1080]
    assert page.evaluate("document.documentElement.scrollHeight") <= 1080
    sizes = page.evaluate("""() => Array.from(document.querySelectorAll(
        '.tcard:not([hidden]) .name, .tcard:not([hidden]) .result'))
        .map(e => parseFloat(getComputedStyle(e).fontSize))""")
    assert min(sizes) >= 22, min(sizes)  # names 24 px, results 22 px: 5 m on a big TV
    number = page.evaluate("parseFloat(getComputedStyle(document.querySelector('.tcard h2'))"
                           ".fontSize)")
    assert number >= 36
    first = shown.nth(0).get_attribute("data-table")
    page.clock.fast_forward(13_000)
    assert page.locator("#screen-page").inner_text() == "page 2 of 2"
    assert page.locator(".tcard:not([hidden])").count() == 10
    assert page.locator(".tcard:not([hidden])").nth(0).get_attribute("data-table") == "51"
    page.clock.fast_forward(13_000)
    assert page.locator(".tcard:not([hidden])").nth(0).get_attribute("data-table") == first


def _badge(page: Any, table: str) -> dict[str, Any]:
    return dict(page.evaluate("""(t) => {
        const card = document.querySelector('.tcard[data-table="' + t + '"]');
        const net = card.querySelector('[data-k="net"]');
        const silent = card.querySelector('[data-k="silent"]');
        const s = getComputedStyle(net);
        return {text: net.innerText, bg: s.backgroundColor, opacity: getComputedStyle(card).opacity,
                silent: silent.innerText, silentBg: getComputedStyle(silent).backgroundColor};
    }""", table))


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_offline_silent_and_unknown_tables_stand_out_in_words(
    venue_60: Any, browser: Any, theme: str
) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900}, color_scheme=theme)
    page.goto(venue_60.url)
    page.wait_for_selector('#live[data-state="on"]')
    offline, silent, online = _badge(page, "2"), _badge(page, "60"), _badge(page, "3")
    assert offline["text"] == "OFFLINE" and offline["opacity"] == "1"
    assert offline["bg"] not in (online["bg"], "rgba(0, 0, 0, 0)")  # a solid badge of its own
    assert silent["text"] == "unknown" and silent["silent"] == "SILENT: NO EVENT YET"
    assert silent["silentBg"] != "rgba(0, 0, 0, 0)"
    assert online["text"] == "online" and online["silent"] == ""
    # Black's dot: its ring is the text colour, which contrasts with the card.
    ring, card = page.evaluate("""() => [
        getComputedStyle(document.querySelector('.side-dot.side-B')).borderTopColor,
        getComputedStyle(document.querySelector('.tcard')).backgroundColor]""")
    assert ring != card and ring != "rgba(0, 0, 0, 0)"


@pytest.mark.parametrize("path", ["standings", "rounds", "games"])
def test_phone_tables_show_every_column_at_390_px(
    venue_60: Any, browser: Any, path: str
) -> None:
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(venue_60.url + path)
    page.wait_for_selector("table.list")
    wraps = page.evaluate("""() => Array.from(document.querySelectorAll('.table-wrap'))
        .map(w => [w.scrollWidth, w.clientWidth])""")
    assert wraps and all(s <= c for s, c in wraps), wraps  # nothing scrolled out of view
    rights = page.evaluate("""() => Array.from(document.querySelectorAll('table.list tr'))
        .map(r => Array.from(r.cells).filter(c => getComputedStyle(c).display !== 'none')
        .map(c => c.getBoundingClientRect().right))""")
    assert max(max(r) for r in rights if r) <= 390
    if path == "standings":  # every tie-break in force has its column, the last one too
        heads = page.locator("#standings thead th").all_inner_texts()
        assert heads[-3:] == ["DE", "Bh", "SB"], heads
