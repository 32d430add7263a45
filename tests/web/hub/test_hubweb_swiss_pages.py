"""A Swiss event run from the hub's pages alone, in a real browser: a real Mosquitto,
``gg-arbiter hub`` serving, and two ``gg-arbiter run --sim`` tables. The organiser logs
in, enters five players (one by one and a pasted CSV), chooses the tie-breaks, pairs
three Swiss rounds and sends each round's boards to the tables suggested; the players
play at the tables (their simulator API: pieces seated, a draw declared on the table);
the organiser page shows each result as it arrives, and a spectator's phone shows the
venue and the standings change, without a reload and with no rank while games are on.
The final standings are the ones the test derives from the rules."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.hub_secrecy import leaks
from tests.support.tools import require_tool
from tests.support.venue import BoardGame, Node, SimTable, venue
from tests.support.waiting import wait_until
from tests.support.web import PIN

pytestmark = pytest.mark.timeout(240)

EVENT = "swiss"
#: Milliseconds a page assertion waits for the page to show what it expects.
SHOWN = 20_000
#: (name, rating): the stronger player wins, except that Ben and Di draw (they meet in
#: round 1: Eli has the bye, Ana meets Cy, Ben meets Di).
PLAYERS = [("Ana", 1900), ("Ben", 1800), ("Cy", 1700), ("Di", 1600), ("Eli", 1500)]
STRENGTH = [name for name, _rating in PLAYERS]
DRAWN = {"Ben", "Di"}
ROUNDS = 3
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def pages_venue(tmp_path: Path) -> Iterator[tuple[Node, dict[str, SimTable]]]:
    """A broker, the hub serving, and tables 1 and 2 joined to the event."""
    require_tool("chromium")
    with venue(tmp_path, EVENT, ["1", "2"]) as nodes:
        yield nodes



@pytest.fixture
def patient() -> Iterator[None]:
    """Page assertions wait up to SHOWN ms (a loaded machine), then Playwright's default."""
    from playwright.sync_api import expect

    expect.set_options(timeout=SHOWN)
    try:
        yield
    finally:
        expect.set_options(timeout=5_000)


def _winner(white: str, black: str) -> str | None:
    if {white, black} == DRAWN:
        return None
    return "W" if STRENGTH.index(white) < STRENGTH.index(black) else "B"


def _result(white: str, black: str) -> str:
    return {"W": "1-0", "B": "0-1", None: "1/2-1/2"}[_winner(white, black)]


def derived_standings(boards: list[dict[str, Any]]) -> list[tuple[str, float, int, float, float]]:
    """(name, points, byes, Buchholz, Sonneborn-Berger) in standings order, from the rules:
    1 a win, 1/2 a draw, 1 a bye; Buchholz sums the opponents' points (a bye adds none),
    Sonneborn-Berger the points of those beaten and half of those drawn with; ties
    broken by Buchholz, then Sonneborn-Berger, then rating."""
    points = {name: 0.0 for name in STRENGTH}
    byes = Counter[str]()
    games: list[tuple[str, str, float]] = []  # (player, opponent, what the player scored)
    for b in boards:
        if b["black"] is None:
            points[b["white"]] += 1.0
            byes[b["white"]] += 1
            continue
        winner = _winner(b["white"], b["black"])
        white_scored = {"W": 1.0, "B": 0.0, None: 0.5}[winner]
        points[b["white"]] += white_scored
        points[b["black"]] += 1.0 - white_scored
        games += [(b["white"], b["black"], white_scored),
                  (b["black"], b["white"], 1.0 - white_scored)]
    buchholz = {n: sum(points[o] for p, o, _s in games if p == n) for n in STRENGTH}
    sb = {n: sum(s * points[o] for p, o, s in games if p == n) for n in STRENGTH}
    order = sorted(STRENGTH, key=lambda n: (-points[n], -buchholz[n], -sb[n], STRENGTH.index(n)))
    return [(n, points[n], byes[n], buchholz[n], sb[n]) for n in order]


def _no_rank(page: Any, where: str) -> None:
    found = leaks(page.content())  # the endings of games over ("Flag captured") allowed
    assert not found, f"{where} shows {found} while games are on"


def test_swiss_event_of_five_run_from_the_pages_alone(
    pages_venue: tuple[Node, dict[str, SimTable]], browser: Any, patient: None,
) -> None:
    from playwright.sync_api import expect

    hub, tables = pages_venue
    base = f"http://127.0.0.1:{hub.web.port}"

    def tables_heard() -> bool:
        rows = hub.call("GET", "/api/venue")["tables"]
        return sorted(r["table"] for r in rows if r["online"]) == ["1", "2"]

    wait_until(tables_heard, what="both tables online at the hub")

    problems: list[str] = []

    def watch(page: Any) -> Any:
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: problems.append(str(e)))
        page.set_default_timeout(SHOWN)
        return page

    desk = browser.new_context(viewport={"width": 1280, "height": 900})
    phone = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True,
                                device_scale_factor=2)
    org = watch(desk.new_page())
    # A spectator's phone: the venue screen, and the standings in a second tab.
    screen = watch(phone.new_page())
    ladder = watch(phone.new_page())
    for page, path in ((screen, "/"), (ladder, "/standings")):
        page.goto(base + path)
        expect(page.locator('#live[data-state="on"]')).to_be_visible()
        page.evaluate("() => { window.__sameDocument = 1; }")

    # --- the organiser logs in and enters the players -----------------------------
    org.goto(base + "/organiser")
    org.fill('input[name="pin"]', PIN)
    org.click('button:has-text("Log in")')
    expect(org.locator("h1")).to_have_text("Organiser")
    flash = org.locator(".flash")
    for name, rating in PLAYERS[:3]:
        org.fill('form[data-key="add-player"] input[name="name"]', name)
        org.fill('form[data-key="add-player"] input[name="rating"]', str(rating))
        org.click('form[data-key="add-player"] button')
        expect(flash).to_have_text(f"{name} added")
    org.click("#import-players summary")
    org.fill('form[data-key="import"] textarea',
             "name,rating\n" + "".join(f"{n},{r}\n" for n, r in PLAYERS[3:]))
    org.click('form[data-key="import"] button')
    expect(flash).to_have_text("2 player(s) added")
    expect(org.locator("#players-list")).to_contain_text("5 playing")
    # Tie-breaks: Buchholz, then Sonneborn-Berger.
    org.select_option('select[name="tiebreak-1"]', "buchholz")
    org.select_option('select[name="tiebreak-2"]', "sonneborn-berger")
    org.select_option('select[name="tiebreak-3"]', "")
    org.click('form[data-key="tiebreaks"] button')
    expect(flash).to_have_text("tie-breaks: buchholz, sonneborn-berger")

    # For a look at the pages: HUB_SCREENSHOTS=DIR pytest this test.
    shots = os.environ.get("HUB_SCREENSHOTS")
    if shots:
        Path(shots).mkdir(parents=True, exist_ok=True)
    boards: list[dict[str, Any]] = []
    for number in range(1, ROUNDS + 1):
        # --- pair the round, send its boards to the suggested tables -----------------
        org.select_option('form[data-key="pair"] select[name="system"]', "swiss")
        org.click('form[data-key="pair"] button')
        expect(flash).to_contain_text(f"round {number} paired: 3 board(s)")
        section = org.locator(f'#rounds-live section[data-round="{number}"]')
        for board in (1, 2):  # board n is offered the n-th table heard of
            expect(section.locator(f'input[name="table-{board}"]')).to_have_value(str(board))
        expect(section.locator('tr[data-board="3"]')).to_contain_text("bye")
        section.locator('form[data-key^="assign-"] button').click()
        expect(flash).to_have_text(f"round {number}: board 1 -> table 1, sent;"
                                   " board 2 -> table 2, sent")
        org.evaluate("() => { window.__sameDocument = 1; }")
        swaps = int(org.evaluate("() => Number(document.body.dataset.swaps || 0)"))

        (rnd,) = [r for r in hub.call("GET", "/api/rounds") if r["round"] == number]
        boards += [{"round": number, **b} for b in rnd["boards"]]
        games = [BoardGame(tables[b["table"]], {"round": number, **b})
                 for b in rnd["boards"] if not b["bye"]]
        assert [g.name for g in games] == ["1", "2"]

        # --- the players play; the phone follows the venue; no rank anywhere --------
        for g in games:
            g.start()
        for g in games:
            card = screen.locator(f'.tcard[data-table="{g.name}"]')
            expect(card.locator('[data-k="where"]')).to_have_text(
                f"Round {number} \u00b7 board {g.board['board']}")
            expect(card.locator('[data-k="challenges"]')).to_have_text("1")
            expect(card.locator('[data-k="lostB"]')).to_have_text("1")
            expect(card.locator('[data-k="white"]')).to_have_text(g.board["white"])
        for page, where in ((screen, "the phone's venue"), (ladder, "the phone's standings"),
                            (org, "the organiser page")):
            _no_rank(page, f"{where} in round {number}")
        if shots and number == ROUNDS:
            screen.screenshot(path=f"{shots}/phone-venue-on.png", full_page=True)
            org.screenshot(path=f"{shots}/organiser-on.png", full_page=True)
        # The organiser has begun a correction of board 1 but not sent it: the
        # results arriving must not wipe it.
        pick = section.locator('tr[data-board="1"] select[name="result"]')
        assert pick.input_value() == "none"  # no result yet
        pick.select_option("1/2-1/2")

        # --- results arrive by themselves --------------------------------------------
        for g in games:
            g.finish(_winner(g.board["white"], g.board["black"]))
            want = _result(g.board["white"], g.board["black"])
            expect(section.locator(f'tr[data-board="{g.board["board"]}"] td.res')).to_contain_text(
                want)
            result_on_card = screen.locator(f'.tcard[data-table="{g.name}"] [data-k="result"]')
            expect(result_on_card).to_contain_text(want)
        assert int(org.evaluate("() => Number(document.body.dataset.swaps)")) > swaps
        assert pick.input_value() == "1/2-1/2"  # kept through the swaps
        assert org.evaluate("window.__sameDocument") == 1  # shown live, not reloaded
        expect(org.locator("#org-tables")).to_contain_text(want)

    # --- the end: standings from the rules, on the phone and in the JSON -------------
    expected = derived_standings(boards)
    rows = hub.call("GET", "/api/standings")["rows"]
    assert hub.call("GET", "/api/standings")["tiebreaks"] == ["buchholz", "sonneborn-berger"]
    got = [(r["name"], r["score"], r["byes"], r["tiebreaks"][0], r["tiebreaks"][1])
           for r in rows]
    assert got == expected, (got, expected)
    ladder_rows = ladder.locator("#standings tbody tr")
    expect(ladder_rows.first).to_contain_text(expected[0][0])
    for i, (name, points, byes, buchholz, _sb) in enumerate(expected):
        cells = ladder_rows.nth(i).locator("td")  # #, player, points, played, W, D, L, byes, Bh
        expect(cells.nth(1)).to_have_text(name)
        expect(cells.nth(2)).to_have_text(str(points))
        expect(cells.nth(7)).to_have_text(str(byes))
        expect(cells.nth(8)).to_have_text(str(buchholz))
    # Swiss: nobody met twice, one bye at most each (three rounds of five: three byes).
    met = [frozenset((b["white"], b["black"])) for b in boards if b["black"] is not None]
    assert len(met) == len(set(met)) == 2 * ROUNDS
    bye_count = Counter(b["white"] for b in boards if b["black"] is None)
    assert sum(bye_count.values()) == ROUNDS and max(bye_count.values()) == 1
    assert DRAWN in met  # a draw declared at a table counted too
    for page in (screen, ladder):
        assert page.evaluate("window.__sameDocument") == 1  # followed live, never reloaded
    if shots:
        org.screenshot(path=f"{shots}/organiser.png", full_page=True)
        screen.screenshot(path=f"{shots}/phone-venue.png", full_page=True)
        ladder.screenshot(path=f"{shots}/phone-standings.png", full_page=True)
        org.set_viewport_size(PHONE)
        org.screenshot(path=f"{shots}/phone-organiser.png", full_page=True)
        for name, path in (("rounds", "/rounds"), ("games", "/games"),
                           ("reveal", f"/games/1/{games[0].id}")):
            ladder.goto(base + path)
            ladder.screenshot(path=f"{shots}/phone-{name}.png", full_page=True)
    assert not problems, problems
    desk.close()
    phone.close()

