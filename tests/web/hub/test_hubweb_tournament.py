"""A 4-player round robin end to end: a real Mosquitto, ``gg-arbiter hub`` serving, and two
``gg-arbiter run --sim`` tables played through their simulator API. The organiser acts
only through the hub's API; the results flow back by themselves; the standings come out
as the rules say. While each game is on, every public hub route and the event stream
carry no rank; once it is over, the hub shows its reveal."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.hub_secrecy import crawl, leaks
from tests.support.venue import BoardGame, Node, SimTable, venue
from tests.support.waiting import WAIT, wait_until
from tests.support.web import SseClient, http_get

pytestmark = pytest.mark.timeout(240)

EVENT = "rr"
#: Who wins each game: the stronger by this order, except Ben and Cy, who draw.
STRENGTH = ["Ana", "Ben", "Cy", "Di"]
DRAWN = {"Ben", "Cy"}


def _winner(white: str, black: str) -> str | None:
    if {white, black} == DRAWN:
        return None
    return "W" if STRENGTH.index(white) < STRENGTH.index(black) else "B"


def _reveal(hub: Node, path: str) -> Any:
    return hub.call("GET", path)["reveal"]


def _hub_has(hub: Node, games: list[BoardGame]) -> bool:
    rows = {r["table"]: r for r in hub.call("GET", "/api/venue")["tables"]}
    return all(g.name in rows and rows[g.name]["game"] == str(g.id)
               and rows[g.name]["challenges"] == 1 for g in games)


@pytest.fixture
def rr_venue(tmp_path: Path) -> Iterator[tuple[Node, dict[str, SimTable]]]:
    with venue(tmp_path, EVENT, ["1", "2"]) as nodes:
        yield nodes


def test_round_robin_of_four_on_two_tables_gives_the_standings(
    rr_venue: tuple[Node, dict[str, SimTable]],
) -> None:
    hub, tables = rr_venue
    sse = SseClient(hub.web.port)
    try:
        roster = "name,rating\n" + "".join(f"{n},{2000 - 100 * i}\n"
                                           for i, n in enumerate(STRENGTH))
        hub.call("POST", "/api/organiser/players/import", {"csv": roster}, pin=True)
        played: list[tuple[str, int]] = []
        for number in (1, 2, 3):
            hub.call("POST", "/api/organiser/rounds", {"system": "round-robin"}, pin=True)
            (rnd,) = [r for r in hub.call("GET", "/api/rounds") if r["round"] == number]
            assert len(rnd["boards"]) == 2
            for b in rnd["boards"]:
                hub.call("POST", "/api/organiser/assign",
                         {"round": number, "board": b["board"], "table": str(b["board"])},
                         pin=True)
            games = [BoardGame(tables[str(b["board"])], {"round": number, **b})
                     for b in rnd["boards"]]
            for g in games:
                g.start()
            # Both games of the round are on: no rank anywhere on the hub.
            wait_until(functools.partial(_hub_has, hub, games), what="the hub has both")
            crawl(hub.web, [(g.name, str(g.id)) for g in games], f"round {number} on")
            assert not leaks(sse.text()), leaks(sse.text())
            for g in games:
                g.finish(_winner(g.board["white"], g.board["black"]))
                played.append((g.name, g.id))

            def round_done(number: int = number) -> bool:
                (r,) = [r for r in hub.call("GET", "/api/rounds") if r["round"] == number]
                return all(b["result"] for b in r["boards"])

            wait_until(round_done, timeout=3 * WAIT, what=f"round {number}'s results")

        standings = hub.call("GET", "/api/standings")["rows"]
        # Ana beats all (3); Ben and Cy beat Di and draw together (1.5 each); Di 0.
        # Ben and Cy stay equal on every tie-break (their game a draw; Buchholz 4.5 each;
        # Sonneborn-Berger 0 + 1.5/2 each), so they share second place.
        assert [(s["rank"], s["name"], s["score"]) for s in standings] == [
            (1, "Ana", 3.0), (2, "Ben", 1.5), (2, "Cy", 1.5), (4, "Di", 0.0)]
        assert [s["tiebreaks"][1] for s in standings] == [3.0, 4.5, 4.5, 6.0]
        # Every game is over now: the reveals show the pieces.
        for name, game in played:
            wait_until(functools.partial(_reveal, hub, f"/api/games/{name}/{game}"),
                       what=f"the reveal of table {name} game {game}")
        first = f"/games/{played[0][0]}/{played[0][1]}"
        _s, _h, page = http_get(hub.web, first)
        assert "General" in page and "Spy" in page
        assert not leaks(sse.text())  # the stream never carries a rank
    finally:
        sse.close()
