"""A Swiss event of 9 players over 4 rounds, end to end: a real Mosquitto, ``gg-arbiter hub``
serving, and four ``gg-arbiter run --sim`` tables whose games are played through their
simulator API. The organiser only pairs and assigns (through the hub's API); every result
comes back from the tables. The pairings obey the Swiss rules (no repeat, one bye at most,
everyone in every round, colours within ±2) and the standings are the ones the rules give
for the results the tables produced, computed here independently of the hub."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.venue import BoardGame, Node, SimTable, venue
from tests.support.waiting import WAIT, wait_until

pytestmark = pytest.mark.timeout(300)

EVENT = "swiss9"
#: Seed order (strongest first). The stronger player wins, except neighbours here, who draw.
PLAYERS = ["Ana", "Ben", "Cy", "Di", "Eve", "Fay", "Gus", "Hal", "Ivy"]
TABLES = ["1", "2", "3", "4"]
ROUNDS = 4
#: The audit log's name for a result the organiser set by hand.
CORRECTION = "result"


def _winner(white: str, black: str) -> str | None:
    w, b = PLAYERS.index(white), PLAYERS.index(black)
    if abs(w - b) == 1:
        return None
    return "W" if w < b else "B"


def _points(winner: str | None) -> tuple[float, float]:
    return {"W": (1.0, 0.0), "B": (0.0, 1.0), None: (0.5, 0.5)}[winner]


@pytest.fixture
def swiss_venue(tmp_path: Path) -> Iterator[tuple[Node, dict[str, SimTable]]]:
    with venue(tmp_path, EVENT, TABLES) as nodes:
        yield nodes


def _round(hub: Node, number: int) -> dict[str, Any]:
    (rnd,) = [r for r in hub.call("GET", "/api/rounds") if r["round"] == number]
    return dict(rnd)


def test_swiss_of_nine_over_four_rounds_on_four_tables(
    swiss_venue: tuple[Node, dict[str, SimTable]],
) -> None:
    hub, tables = swiss_venue
    roster = "name,rating\n" + "".join(f"{n},{2400 - 50 * i}\n" for i, n in enumerate(PLAYERS))
    hub.call("POST", "/api/organiser/players/import", {"csv": roster}, pin=True)

    score: dict[str, float] = defaultdict(float)
    met: dict[str, list[str]] = defaultdict(list)  # opponents in games with a result
    byes: dict[str, int] = defaultdict(int)
    colours: dict[str, int] = defaultdict(int)  # Whites minus Blacks
    seen_pairs: set[frozenset[str]] = set()
    for number in range(1, ROUNDS + 1):
        hub.call("POST", "/api/organiser/rounds", {"system": "swiss"}, pin=True)
        rnd = _round(hub, number)
        boards = [b for b in rnd["boards"] if not b["bye"]]
        (bye,) = [b for b in rnd["boards"] if b["bye"]]
        assert len(boards) == 4
        # Everyone plays or has the bye, once.
        names = [p for b in boards for p in (b["white"], b["black"])] + [bye["white"]]
        assert sorted(names) == sorted(PLAYERS), names
        byes[bye["white"]] += 1
        score[bye["white"]] += 1.0
        games = []
        for table, b in zip(TABLES, boards, strict=True):
            pair = frozenset((b["white"], b["black"]))
            assert pair not in seen_pairs, f"round {number} repeats {sorted(pair)}"
            seen_pairs.add(pair)
            hub.call("POST", "/api/organiser/assign",
                     {"round": number, "board": b["board"], "table": table}, pin=True)
            games.append(BoardGame(tables[table], {"round": number, **b}))
        for g in games:
            g.start()
        for g in games:
            white, black = g.board["white"], g.board["black"]
            winner = _winner(white, black)
            g.finish(winner)
            pw, pb = _points(winner)
            score[white] += pw
            score[black] += pb
            met[white].append(black)
            met[black].append(white)
            colours[white] += 1
            colours[black] -= 1

        def round_done(number: int = number) -> bool:
            return all(b["result"] for b in _round(hub, number)["boards"] if not b["bye"])

        wait_until(round_done, timeout=3 * WAIT, what=f"round {number}'s results from the tables")

    assert max(byes.values()) == 1 and sum(byes.values()) == ROUNDS
    assert all(abs(d) <= 2 for d in colours.values()), dict(colours)
    standings = hub.call("GET", "/api/standings")
    rows = {r["name"]: r for r in standings["rows"]}
    assert {n: r["score"] for n, r in rows.items()} == {n: score[n] for n in PLAYERS}
    assert {n: r["byes"] for n, r in rows.items()} == {n: byes[n] for n in PLAYERS}
    buchholz = standings["tiebreaks"].index("buchholz")
    assert {n: r["tiebreaks"][buchholz] for n, r in rows.items()} == {
        n: sum(score[o] for o in met[n]) for n in PLAYERS}
    # Ranked by score first: nobody stands above a player with more points.
    ordered = [r["score"] for r in standings["rows"]]
    assert ordered == sorted(ordered, reverse=True)
    # Every game's result came from its table, none was typed: no correction in the audit.
    audit = hub.call("GET", "/api/organiser/audit", pin=True)
    assert not [e for e in audit if e["what"] == CORRECTION], audit
