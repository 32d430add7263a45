"""Nothing is lost when any process dies: a real Mosquitto (persistence on, as the venue
broker), a served ``gg-arbiter hub`` and two ``gg-arbiter run --sim`` tables play two
games while the broker, then the hub, then one table is killed with SIGKILL and started
again. The hub must end with exactly the events the tables' journals give (the fleet
outbox derives them: same seq, same payload), no gap, no copy, and each game's result.

A second test kills the broker while the hub is down too: the event a table publishes
before the hub subscribes again must still reach it. Mosquitto saves its state only on a
clean stop or at autosave, so the venue broker saves every second (``autosave_interval 1``,
as ``gg-arbiter broker-config`` writes); without it this test loses that event."""

from __future__ import annotations

import functools
import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arbiter.fleet.outbox import CursorFile
from tests.support.mqtt import Mosquitto
from tests.support.tools import require_tool
from tests.support.venue import Node, SimTable, held, hub_node, sim_table
from tests.support.waiting import WAIT, wait_until

pytestmark = pytest.mark.timeout(180)

EVENT = "kills"


def _holds(ledger: Path, table: str, expected: list[str]) -> bool:
    return held(ledger, table) == expected


def _rejections(ledger: Path) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True, timeout=30)
    try:
        return db.execute("SELECT table_name, seq, reason FROM rejections").fetchall()
    finally:
        db.close()


def _games(ledger: Path, table: str) -> dict[str, tuple[str | None, str | None]]:
    db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True, timeout=30)
    try:
        rows = db.execute("SELECT game, ending, winner FROM games WHERE table_name=?",
                          (table,)).fetchall()
    finally:
        db.close()
    return {str(g): (e, w) for g, e, w in rows}


@pytest.fixture
def venue(tmp_path: Path) -> Iterator[tuple[Mosquitto, Node, dict[str, SimTable], Path]]:
    require_tool("mosquitto")
    broker = Mosquitto(tmp_path / "broker", persistent=True)
    broker.start()
    url = f"mqtt://127.0.0.1:{broker.port}"
    nodes: list[Node] = []
    try:
        hub_data = tmp_path / "hub"
        hub = hub_node(hub_data, EVENT, url)
        nodes.append(hub.start())
        tables: dict[str, SimTable] = {}
        for name in ("1", "2"):
            tables[name] = sim_table(tmp_path, name, EVENT, url)
            nodes.append(tables[name].node.start())
        yield broker, hub, tables, hub_data / "hub.sqlite"
    finally:
        for node in nodes:
            node.stop()
        broker.stop()


def test_kill_broker_hub_and_table_mid_round_loses_no_event(
    venue: tuple[Mosquitto, Node, dict[str, SimTable], Path],
) -> None:
    broker, hub, tables, ledger = venue
    t1, t2 = tables["1"], tables["2"]
    kills: list[str] = []
    for t in (t1, t2):
        t.new_game()
        t.challenge("W:SPY", "B:5*G")  # the spy takes the general
    wait_until(lambda: all(held(ledger, t.name) == t.expected() for t in (t1, t2)),
               what="the hub has both games' first events")

    # The broker dies mid-round; a challenge is played while it is away.
    broker.kill()
    kills.append("broker")
    t1.challenge("B:PVT", "W:SPY")  # the private takes the spy
    broker.start()
    for t in (t1, t2):
        t.challenge("W:SGT", "B:PVT")  # the sergeant takes the private

    # The hub dies mid-round; both tables play on without it.
    hub.kill9()
    kills.append("hub")
    for t in (t1, t2):
        t.challenge("W:CPT", "B:1LT")  # the captain takes the first lieutenant
    hub.start()

    # Table 2 dies mid-game and comes back on its data dir (its journal and cursor).
    t2.challenge("B:MAJ", "W:CPT")  # the major takes the captain
    t2.node.kill9()
    kills.append("table 2")
    t2.node.start()
    t2.challenge("W:COL", "B:MAJ")  # the colonel takes the major

    # Both games end: White takes the flag at table 1; a draw at table 2.
    t1.challenge("W:PVT", "B:FLG")
    t2.node.call("POST", f"/api/games/{t2.game}/end", {"reason": "draw"}, pin=True)
    for t in (t1, t2):
        wait_until(t.over, what=f"table {t.name}'s game over in its journal")

    for t in (t1, t2):
        expected = t.expected()
        wait_until(functools.partial(_holds, ledger, t.name, expected),
                   timeout=6 * WAIT, what=f"the hub to hold table {t.name}'s events")
        seqs = [json.loads(e)["seq"] for e in held(ledger, t.name)]
        assert seqs == list(range(1, len(expected) + 1)), seqs  # no gap, no copy
        games = _games(ledger, t.name)
        assert games == t.endings(), (t.name, games)
    assert _rejections(ledger) == []  # no copy contradicted an event held
    # The games played end as they were played (a table's earlier, untouched game
    # was abandoned by the new one): the hub's rows equal these, checked above.
    assert t1.endings()[str(t1.game)][1] == "W"
    assert t2.endings()[str(t2.game)] == ("draw", None)
    print(f"\nhub kills: {len(kills)} ({', '.join(kills)}); events per table: "
          + ", ".join(f"table {t.name}: {len(t.expected())}" for t in (t1, t2)))


def test_event_published_before_the_hub_resubscribes_after_a_broker_kill_reaches_it(
    venue: tuple[Mosquitto, Node, dict[str, SimTable], Path],
) -> None:
    broker, hub, tables, ledger = venue
    t1 = tables["1"]
    t1.new_game()
    wait_until(lambda: held(ledger, "1") == t1.expected(), what="the hub has table 1's game")
    # The venue broker saves its state every second, not on every change (broker-config's
    # autosave_interval 1): what it holds is safe from a kill -9 once saved. Kill it after
    # it has saved the hub's session; what is newer than that is the resender's to fetch.
    heard = time.time()
    store = broker.workdir / "mosquitto.db"
    wait_until(lambda: store.exists() and store.stat().st_mtime > heard,
               what="the broker saved its state")
    # The broker dies and comes back before the hub does (the same window opens when
    # the hub's reconnect timer simply fires after a table's).
    broker.kill()
    hub.kill9()
    broker.start()
    t1.challenge("W:SPY", "B:5*G")
    expected = t1.expected()
    wait_until(lambda: CursorFile(t1.data).load().seq == len(expected),
               what="the broker acknowledged table 1's challenge")
    hub.start()
    t1.challenge("W:PVT", "B:FLG")  # later events do arrive: the challenge is a gap
    expected = t1.expected()
    wait_until(lambda: held(ledger, "1")[-1:] == expected[-1:], timeout=3 * WAIT,
               what="the hub has table 1's last event")
    assert held(ledger, "1") == expected
