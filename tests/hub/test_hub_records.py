"""Every game's record reaches the hub though a table's records share one retained topic
(issue 27, item 5): end to end, with a real Mosquitto (persistence on, as the venue
broker), a real ``gg-arbiter run --sim`` table and a served ``gg-arbiter hub``.

The broker keeps only a table's latest record; each earlier one reaches a hub that was
away through its session for the table (every record is published at QoS 1, so the
broker queues it), and a hub that never had a session (a fresh ledger) asks the table
for the records it lacks (``resend``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from arbiter.fleet.outbox import CursorFile
from tests.support.mqtt import Mosquitto, Subscriber
from tests.support.venue import HubFactory, SimTable, late_hub_venue
from tests.support.waiting import WAIT, wait_until

pytestmark = pytest.mark.timeout(240)

EVENT = "records"

@pytest.fixture
def venue(tmp_path: Path) -> Iterator[tuple[Mosquitto, SimTable, HubFactory, Path]]:
    with late_hub_venue(tmp_path, EVENT) as parts:
        yield parts


def _play(table: SimTable) -> int:
    """One whole game (the private takes the flag), acknowledged by the broker; its id."""
    table.new_game()
    table.challenge("W:PVT", "B:FLG")
    wait_until(table.over, what=f"game {table.game} over")
    published = len(table.expected())
    wait_until(lambda: CursorFile(table.data).load().seq == published,
               what="the broker acknowledged the table's events")
    return table.game


def _records(ledger: Path, table: str) -> set[str]:
    """The games whose records the hub's ledger holds, read beside the running hub."""
    if not ledger.exists():
        return set()
    db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True, timeout=30)
    try:
        rows = db.execute("SELECT game FROM records WHERE table_name=?", (table,)).fetchall()
    except sqlite3.OperationalError:  # no schema yet
        return set()
    finally:
        db.close()
    return {g for (g,) in rows}


def test_a_hub_away_for_several_games_gets_every_record_from_its_session(
    venue: tuple[Mosquitto, SimTable, HubFactory, Path],
) -> None:
    broker, table, make_hub, ledger = venue
    hub = make_hub(3600)  # no resend within the test: the broker's queue alone
    _play(table)
    before = set(table.endings())  # the table's first game, ended by NEW GAME, and this one
    wait_until(lambda: _records(ledger, "1") == before, what="the first games' records")
    hub.stop()  # away: the broker keeps the hub's session for table 1 and queues for it
    away = [_play(table) for _ in range(3)]
    # The broker keeps one record of the table: the latest.
    late = Subscriber(broker.port, f"gg/{EVENT}/table/1/#")
    late.wait(lambda s: s.records(away[-1]), what="the latest record, retained")
    assert [m.json()["game"] for m in late.on("/record")] == [away[-1]]
    late.close()
    back = make_hub(3600)
    assert set(table.endings()) == before | {str(g) for g in away}
    wait_until(lambda: _records(ledger, "1") == set(table.endings()),
               timeout=3 * WAIT, what="every game's record at the hub")
    assert back.session is not None
    assert not any("asking the table to resend" in ln for ln in back.session.lines)


def test_a_fresh_hub_gets_earlier_records_by_asking_the_table(
    venue: tuple[Mosquitto, SimTable, HubFactory, Path],
) -> None:
    _broker, table, make_hub, ledger = venue
    for _ in range(3):  # no hub has ever subscribed: the broker queues nothing
        _play(table)
    games = set(table.endings())
    assert len(games) == 4  # the table's first game, ended by NEW GAME, and three
    hub = make_hub(0.5)
    wait_until(lambda: _records(ledger, "1") == games, timeout=3 * WAIT,
               what="every game's record at a fresh hub")
    assert hub.session is not None
    asked = [ln for ln in hub.session.lines if "asking the table to resend" in ln]
    assert any("the records of games" in ln for ln in asked), asked
