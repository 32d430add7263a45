"""Last week's tables cannot change this week's result, end to end (issue 27): a real
Mosquitto, a real ``gg-arbiter run --sim`` table and two served ``gg-arbiter hub``s of the
same event name, players and pairings, a week apart. This week's hub, a fresh ledger,
asks the table for all its events: last week's game comes back, is kept and listed, and
never scored; the game played under this week's pairing is."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from arbiter.app.cli import main
from tests.support.mqtt import Mosquitto
from tests.support.tools import require_tool
from tests.support.venue import Node, SimTable, held, hub_node, sim_table
from tests.support.waiting import WAIT, wait_until
from tests.support.web import PIN

pytestmark = pytest.mark.timeout(180)

EVENT = "club-night"


def _hub_cli(hub_data: Path, *args: str) -> int:
    return main(["hub", "--event", EVENT, "--data", str(hub_data), *args])


def _pair_and_assign(hub_data: Path) -> str:
    """The same players and pairing every week; the pairing's id this ledger made."""
    for name in ("Ana", "Ben"):
        assert _hub_cli(hub_data, "players", "add", name) == 0
    assert _hub_cli(hub_data, "pair", "--system", "round-robin") == 0
    assert _hub_cli(hub_data, "assign", "1", "1", "1") == 0
    assert _hub_cli(hub_data, "set-pin", PIN) == 0
    db = sqlite3.connect(f"file:{hub_data / 'hub.sqlite'}?mode=ro", uri=True)
    try:
        ((pairing,),) = db.execute("SELECT pairing_id FROM pairings").fetchall()
    finally:
        db.close()
    return str(pairing)


def _play(table: SimTable, pairing: str, winner: str) -> None:
    """NEW GAME once the table holds ``pairing``'s assignment; ``winner`` takes the flag."""
    wait_until(lambda: (table.status().get("assignment") or {}).get("pairing") == pairing,
               what="the table holds this hub's assignment")
    table.new_game()
    loser = "B" if winner == "W" else "W"
    table.challenge(f"{winner}:PVT", f"{loser}:FLG")
    wait_until(table.over, what="the game over in the table's journal")


@pytest.fixture
def week(tmp_path: Path) -> Iterator[tuple[str, SimTable, list[Node]]]:
    require_tool("mosquitto")
    broker = Mosquitto(tmp_path / "broker", persistent=True)
    broker.start()
    url = f"mqtt://127.0.0.1:{broker.port}"
    nodes: list[Node] = []
    try:
        table = sim_table(tmp_path, "1", EVENT, url)
        nodes.append(table.node.start())
        yield url, table, nodes
    finally:
        for n in nodes:
            n.stop()
        broker.stop()


def test_last_weeks_game_is_kept_listed_never_scored(
    week: tuple[str, SimTable, list[Node]], tmp_path: Path
) -> None:
    url, table, nodes = week
    # Last week: White won under last week's pairing.
    last = tmp_path / "last-week"
    last_id = _pair_and_assign(last)
    hub = hub_node(last, EVENT, url)
    nodes.append(hub.start())
    _play(table, last_id, "W")
    last_game = table.game
    wait_until(lambda: hub.call("GET", "/api/rounds")[0]["boards"][0]["result"] == "1-0",
               what="last week's result")
    hub.stop()
    last_week = table.expected()

    # This week: a fresh ledger, the same event name, players and pairing.
    this = tmp_path / "this-week"
    this_id = _pair_and_assign(this)
    assert this_id != last_id
    hub = hub_node(this, EVENT, url, "--resend-after", "0.5")
    nodes.append(hub.start())
    # It asks the table for every event it lacks: last week's game arrives ...
    wait_until(lambda: held(this / "hub.sqlite", "1") == last_week, timeout=3 * WAIT,
               what="last week's events in this week's ledger")
    unscored = hub.call("GET", "/api/organiser/tables", pin=True)["unscored"]
    assert [(u["game"], u["why"]) for u in unscored] == [(str(last_game),
        "not started under round 1 board 1's pairing (from before it was paired: an"
        " earlier run of the event, or another hub's)")]
    assert hub.call("GET", "/api/rounds")[0]["boards"][0]["result"] is None  # not scored
    # ... and this week's game, Black winning, is the one that counts.
    _play(table, this_id, "B")
    wait_until(lambda: hub.call("GET", "/api/rounds")[0]["boards"][0]["result"] == "0-1",
               timeout=3 * WAIT, what="this week's result")
    scored = [g["game"] for g in hub.call("GET", "/api/games") if g["scored"]]
    assert scored == [str(table.game)]  # this week's game, the table's latest
