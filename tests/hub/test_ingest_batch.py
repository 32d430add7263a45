"""The ingest's group commit: every queued message in one transaction, acknowledged and
announced only once committed, a refused or failed message never holding back the others."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import MQTTErrorCode

from arbiter import wire
from arbiter.hub.broker_link import Ingest
from arbiter.hub.ledger import Ledger
from arbiter.hub.sessions import Delivered
from tests.support.contract import challenge, new_game
from tests.support.waiting import wait_until

EVENT = "open-2026"


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    with Ledger(tmp_path / "hub.sqlite", EVENT) as led:
        yield led


class Seen:
    """What the ingest acknowledged and announced, each with the events another
    connection (a restarted hub) found on disk at that moment."""

    def __init__(self, ledger: Ledger) -> None:
        self.path = ledger.path
        self.acks: list[tuple[int, list[tuple[str, int]]]] = []
        self.changes: list[tuple[str, wire.Topic, list[tuple[str, int]]]] = []

    def on_disk(self) -> list[tuple[str, int]]:
        with sqlite3.connect(self.path) as other:
            return list(other.execute("SELECT table_name, seq FROM events ORDER BY 1, 2"))

    def ack(self, mid: int, _qos: int) -> MQTTErrorCode:
        self.acks.append((mid, self.on_disk()))
        return MQTTErrorCode.MQTT_ERR_SUCCESS

    def changed(self, table: str, kind: wire.Topic) -> None:
        self.changes.append((table, kind, self.on_disk()))


@pytest.fixture
def seen(ledger: Ledger) -> Seen:
    return Seen(ledger)


@pytest.fixture
def ingest(ledger: Ledger, seen: Seen) -> Ingest:
    """An ingest not connected: the test hands it what paho would have received. Its
    client's ``ack`` is noted (paho's side of an ack is not what is tested here)."""
    ing = Ingest(ledger, EVENT, "127.0.0.1", 1)
    ing.changes.follow(seen)
    ing.client.ack = seen.ack  # type: ignore[method-assign, assignment]
    return ing


def _by(ingest: Ingest, batch: list[mqtt.MQTTMessage]) -> list[Delivered]:
    """``batch`` as the ingest's main client delivered it."""
    return [(ingest.client, msg) for msg in batch]


def _message(mid: int, table: str, kind: str, payload: Any) -> mqtt.MQTTMessage:
    msg = mqtt.MQTTMessage(mid, (wire.prefix(EVENT, table) + kind).encode())
    msg.payload = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    msg.qos = 1
    return msg


def test_ingest_writes_a_batch_in_one_commit_then_acks_and_announces(
    ledger: Ledger, ingest: Ingest, seen: Seen
) -> None:
    batch = [
        _message(1, "T1", "events", new_game("T1", 1, "g1")),
        _message(2, "T1", "events", challenge("T1", 2, "g1", 1, 1, 0)),
        _message(3, "T1", "events", new_game("T1", 1, "other")),  # contradicts seq 1
        _message(4, "T1", "events", b"{not json"),
        _message(5, "T1", "status", {"format": 1, "table": "T1", "state": "result"}),
        _message(6, "T2", "events", new_game("T2", 1, "g1")),
    ]
    statements: list[str] = []
    ledger.store._db.set_trace_callback(statements.append)
    try:
        ingest.writer.take_batch(_by(ingest, batch))
    finally:
        ledger.store._db.set_trace_callback(None)
    everything = [("T1", 1), ("T1", 2), ("T2", 1)]
    # One transaction, one fsync, for the whole batch.
    assert statements.count("COMMIT") == 1
    # Refusals are for good, so acknowledged too; every ack in the order received and
    # only once everything is on disk.
    assert seen.acks == [(mid, everything) for mid in range(1, 7)]
    events, status = wire.Topic.EVENTS, wire.Topic.STATUS
    assert seen.changes == [("T1", events, everything), ("T1", events, everything),
                            ("T1", status, everything), ("T2", events, everything)]
    assert len(ledger.events.rejections()) == 2


def _disk_fails() -> None:
    raise OSError("the disk failed")  # SQLite reports it as sqlite3.OperationalError


def test_ingest_refuses_alone_a_message_the_ledger_cannot_keep(
    ledger: Ledger, ingest: Ingest, seen: Seen
) -> None:
    # A constraint failing is this message's for good: sent again it would fail again and
    # hold a place in the broker's window for ever. Refused, noted, acknowledged.
    ledger.store._db.execute(
        "CREATE TRIGGER refuse BEFORE INSERT ON events WHEN NEW.table_name='T2'"
        " BEGIN SELECT RAISE(ABORT, 'refused'); END"
    )
    ingest.writer.take_batch(_by(ingest, [
        _message(1, "T1", "events", new_game("T1", 1, "g1")),
        _message(2, "T2", "events", new_game("T2", 1, "g1")),
        _message(3, "T1", "events", challenge("T1", 2, "g1", 1, 1, 0)),
    ]))
    assert [mid for mid, _disk in seen.acks] == [1, 2, 3]
    assert seen.acks[0][1] == [("T1", 1), ("T1", 2)]
    assert [(t, k) for t, k, _disk in seen.changes] == [("T1", wire.Topic.EVENTS)] * 2
    assert [(t, "IntegrityError" in why) for _at, t, _seq, why in ledger.events.rejections()] == [
        ("T2", True)]


def test_ingest_leaves_a_message_the_ledger_fails_on_unacknowledged(
    ledger: Ledger, ingest: Ingest, seen: Seen
) -> None:
    ledger.store._db.create_function("disk_fails", 0, _disk_fails)
    ledger.store._db.execute(
        "CREATE TRIGGER refuse BEFORE INSERT ON events WHEN NEW.table_name='T2'"
        " BEGIN SELECT disk_fails(); END"
    )
    ingest.writer.take_batch(_by(ingest, [
        _message(1, "T1", "events", new_game("T1", 1, "g1")),
        _message(2, "T2", "events", new_game("T2", 1, "g1")),
        _message(3, "T1", "events", challenge("T1", 2, "g1", 1, 1, 0)),
    ]))
    # T2's message is sent again by the broker at the next connection; the others stay.
    assert [mid for mid, _disk in seen.acks] == [1, 3]
    assert seen.acks[0][1] == [("T1", 1), ("T1", 2)]
    assert [(t, k) for t, k, _disk in seen.changes] == [("T1", wire.Topic.EVENTS)] * 2


def test_ingest_acks_nothing_of_a_batch_whose_commit_failed(
    ledger: Ledger, ingest: Ingest, seen: Seen
) -> None:
    ledger.store._db.execute(
        "CREATE TRIGGER refuse BEFORE INSERT ON events WHEN NEW.table_name='T2'"
        " BEGIN SELECT RAISE(ROLLBACK, 'the disk failed'); END"
    )
    ingest.writer.take_batch(_by(ingest, [
        _message(1, "T1", "events", new_game("T1", 1, "g1")),
        _message(2, "T2", "events", new_game("T2", 1, "g1")),
        _message(3, "T3", "events", new_game("T3", 1, "g1")),
    ]))
    assert seen.acks == []
    assert seen.changes == []
    assert seen.on_disk() == []


def test_ingest_writer_thread_takes_what_paho_queued(
    ledger: Ledger, ingest: Ingest, seen: Seen
) -> None:
    # Queued before the writer starts, as while it commits: one batch takes them all.
    for mid, body in enumerate([new_game("T1", 1, "g1"), challenge("T1", 2, "g1", 1, 1, 0)], 1):
        ingest._message(ingest.client, None, _message(mid, "T1", "events", body))
    statements: list[str] = []
    ledger.store._db.set_trace_callback(statements.append)
    try:
        ingest.writer.inbox.put(None)  # then stop
        ingest.writer.run()
    finally:
        ledger.store._db.set_trace_callback(None)
    assert statements.count("COMMIT") == 1
    assert seen.acks == [(1, [("T1", 1), ("T1", 2)]), (2, [("T1", 1), ("T1", 2)])]


def test_ingest_writer_survives_a_batch_that_fails(ledger: Ledger, seen: Seen) -> None:
    # A listener that fails (a bug) must not stop the ingest: the next batch is written.
    told = threading.Event()

    class Failing:
        def changed(self, table: str, kind: wire.Topic) -> None:
            told.set()
            raise RuntimeError("a listener's bug")

    ingest = Ingest(ledger, EVENT, "127.0.0.1", 1)
    ingest.changes.follow(Failing())
    ingest.client.ack = seen.ack  # type: ignore[method-assign, assignment]
    writer = threading.Thread(target=ingest.writer.run)
    writer.start()
    try:
        ingest._message(ingest.client, None, _message(1, "T1", "events", new_game("T1", 1, "g1")))
        assert told.wait(10)
        ingest._message(ingest.client, None,
                        _message(2, "T1", "events", challenge("T1", 2, "g1", 1, 1, 0)))
    finally:
        ingest.writer.inbox.put(None)
        writer.join(10)
    assert not writer.is_alive()
    assert [mid for mid, _disk in seen.acks] == [1, 2]
    assert seen.on_disk() == [("T1", 1), ("T1", 2)]


def test_ingest_a_poison_pill_never_rolls_back_the_honest_messages_beside_it(
    ledger: Ledger, ingest: Ingest, seen: Seen
) -> None:
    # 2**63 does not fit SQLite's INTEGER: it raised OverflowError inside the batch, which
    # rolled every message of it back, acknowledged none, and came back for ever.
    ingest.writer.take_batch(_by(ingest, [
        _message(1, "T1", "events", new_game("T1", 1, "g1")),
        _message(2, "T2", "events", {**challenge("T2", 2, "g1", 1, 1, 0), "seq": 2**63}),
        _message(3, "T2", "events", {**challenge("T2", 2, "g1", 1, 1, 0), "number": 2**63}),
        _message(4, "T1", "events", challenge("T1", 2, "g1", 1, 1, 0)),
    ]))
    assert [mid for mid, _disk in seen.acks] == [1, 2, 3, 4]
    assert seen.acks[0][1] == [("T1", 1), ("T1", 2)]
    assert [t for _at, t, _seq, _why in ledger.events.rejections()] == ["T2", "T2"]


def test_the_writer_held_up_on_the_ledger_no_longer_keeps_up(ledger: Ledger,
                                                              ingest: Ingest) -> None:
    """What the hub's systemd watchdog asks: an idle writer keeps up (a quiet venue sends
    nothing); one whose batch cannot get at the ledger does not, until it can."""
    progress = ingest.writer.progress
    ingest.start(timeout=1.0)  # no broker at port 1: the writer runs all the same
    try:
        assert progress.keeps_up(0.2)
        with ledger.store.batch(durable=False):  # another writer holds the ledger
            on_message = ingest.client.on_message
            assert on_message is not None
            on_message(  # as paho hands it a message
                ingest.client, None, _message(1, "T1", "events", new_game("T1", 1, "g1")))
            wait_until(lambda: not progress.keeps_up(0.2), timeout=10, what="the writer held up")
        wait_until(lambda: progress.keeps_up(0.2), timeout=10, what="the writer free again")
        wait_until(lambda: bool(seen_events(ledger)), timeout=10, what="the event written")
    finally:
        ingest.stop()


def seen_events(ledger: Ledger) -> list[tuple[str, int]]:
    with sqlite3.connect(ledger.path) as other:
        return list(other.execute("SELECT table_name, seq FROM events"))
