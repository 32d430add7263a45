"""The hub asks a table to resend what it missed, end to end: a real Mosquitto (persistence
on, as the venue broker), a real ``gg-arbiter run --sim`` table and a served
``gg-arbiter hub``. The table plays before the hub has ever subscribed (no session: the
broker keeps nothing for it), so without a resend those events are lost for good."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from arbiter.app.cli import main
from arbiter.fleet.outbox import CursorFile
from arbiter.fleet.resend import ServedFile
from tests.support.mqtt import Mosquitto
from tests.support.venue import HubFactory, SimTable, held, held_records, late_hub_venue
from tests.support.waiting import WAIT, wait_until

pytestmark = pytest.mark.timeout(180)

EVENT = "resend"

@pytest.fixture
def venue(tmp_path: Path) -> Iterator[tuple[Mosquitto, SimTable, HubFactory, Path]]:
    with late_hub_venue(tmp_path, EVENT) as parts:
        yield parts


def _played_unheard(table: SimTable) -> int:
    """A new game and one challenge, acknowledged by a broker no hub has subscribed to."""
    table.new_game()
    table.challenge("W:SPY", "B:5*G")  # the spy takes the general
    published = len(table.expected())
    wait_until(lambda: CursorFile(table.data).load().seq == published,
               what="the broker acknowledged the table's events")
    return published


def _hub_cli(hub_data: Path, *args: str) -> int:
    return main(["hub", "--event", EVENT, "--data", str(hub_data), *args])


def test_the_hub_asks_for_what_it_missed_and_ends_with_the_tables_journal(
    venue: tuple[Mosquitto, SimTable, HubFactory, Path], capsys: pytest.CaptureFixture[str],
) -> None:
    _broker, table, make_hub, ledger = venue
    unheard = _played_unheard(table)
    hub = make_hub(0.5)
    table.challenge("W:PVT", "B:FLG")  # the flag falls: these events reach the hub live
    wait_until(table.over, what="the game over in the table's journal")
    expected = table.expected()
    assert len(expected) == unheard + 2  # the second challenge and the game over
    wait_until(lambda: held(ledger, "1") == expected, timeout=3 * WAIT,
               what="the hub holds every event of the table's journal")
    assert hub.session is not None and table.node.session is not None
    assert any("asking the table to resend" in line for line in hub.session.lines)
    wait_until(lambda: len(ServedFile(table.data).load()) >= 1, what="the table kept it served")
    answer = hub.call("GET", "/api/organiser/tables", pin=True)
    assert answer["gaps"] == {} and answer["rejections"] == []
    assert answer["resends"]["1"]["ranges"][0][0] == 1  # the events played unheard
    # The record goes out right after the game over, on its own topic: "gaps" names it
    # missing until it lands, so wait for it as for the events.
    wait_until(lambda: held_records(ledger, "1") == sorted(table.endings()),
               what="the hub holds the record of every game ended")
    capsys.readouterr()
    assert _hub_cli(ledger.parent, "gaps") == 0
    assert capsys.readouterr().out.strip() == "no table has events or records missing"
    db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True, timeout=30)
    try:
        rows = db.execute("SELECT game, ending, winner FROM games WHERE table_name='1'")
        assert {str(g): (e, w) for g, e, w in rows} == table.endings()
        assert table.endings()[str(table.game)] == ("flag_captured", "W")
    finally:
        db.close()


def test_an_offline_table_serves_the_organisers_request_when_it_comes_back(
    venue: tuple[Mosquitto, SimTable, HubFactory, Path], capsys: pytest.CaptureFixture[str],
) -> None:
    broker, table, make_hub, ledger = venue
    unheard = _played_unheard(table)
    expected = table.expected()
    table.node.stop()  # offline: its retained status says what it published
    hub = make_hub(3600)  # no automatic request within the test: the organiser asks

    def gaps() -> object:
        return hub.call("GET", "/api/organiser/tables", pin=True)["gaps"]

    wait_until(lambda: gaps() == {"1": [[1, unheard]]}, what="the hub sees the tail missing")
    capsys.readouterr()
    url = f"mqtt://127.0.0.1:{broker.port}"
    assert _hub_cli(ledger.parent, "--broker", url, "gaps", "--resend") == 1
    out = capsys.readouterr().out
    first = re.search(r"table 1: resend asked \(request (\d+)\)", out)
    assert first is not None
    done = hub.call("POST", "/api/organiser/resend", {"table": "1"}, pin=True)
    asked = hub.call("GET", "/api/organiser/tables", pin=True)["resends"]["1"]
    # Random ids (never one another ledger made): the second is not the first.
    assert asked["id"] != int(first.group(1))
    assert done["ok"] and f"request {asked['id']}" in done["done"]
    assert asked["ranges"] == [[1, unheard]] and asked["asked_at"]
    assert held(ledger, "1") == []

    table.node.start()  # back: the broker gives it the retained request 2
    wait_until(lambda: held(ledger, "1") == expected, timeout=3 * WAIT,
               what="the hub holds the events the table published while unheard")
    wait_until(lambda: ServedFile(table.data).load()[-1:] == (asked["id"],),
               what="the second request kept as served")
    assert gaps() == {}
    assert _hub_cli(ledger.parent, "gaps") == 0
