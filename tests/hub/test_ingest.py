"""The hub's MQTT ingest against a real Mosquitto, with events following the table contract."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from arbiter import wire
from arbiter.hub.broker_link import Ingest
from arbiter.hub.ledger import Ledger
from arbiter.tournament.model import Player, Result
from tests.support.contract import assigned, challenge, game_over, new_game
from tests.support.mqtt import Mosquitto
from tests.support.waiting import wait_until

EVENT = "open-2026"


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    with Ledger(tmp_path / "hub.sqlite", EVENT) as led:
        led.admin.add_players([Player("Ana"), Player("Ben")])
        led.admin.pair_round("round-robin")
        led.admin.assign_table(1, 1, "T1", who="org")
        yield led


class Table:
    """A table's MQTT client, publishing as the table side does."""

    def __init__(self, port: int, name: str) -> None:
        self.name = name
        self.prefix = wire.prefix(EVENT, name)
        self.received: dict[str, bytes] = {}
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"table-{name}")
        self.client.will_set(self.prefix + "online", b"false", qos=1, retain=True)
        self.client.on_message = lambda _c, _u, msg: self.received.__setitem__(
            msg.topic, msg.payload
        )
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()

    def publish(self, suffix: str, payload: Any, *, retain: bool = False) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.client.publish(self.prefix + suffix, data, qos=1, retain=retain).wait_for_publish(10)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


@pytest.fixture
def table(broker: int) -> Iterator[Table]:
    t = Table(broker, "T1")
    yield t
    t.close()


def _game(table: str, ledger: Ledger) -> list[wire.Event]:
    return [
        new_game(table, 1, "g1", assigned(ledger, 1, 1)),
        challenge(table, 2, "g1", 1, 1, 0),
        challenge(table, 3, "g1", 2, 1, 1),
        game_over(table, 4, "g1", "flag_home", "B"),
    ]


def test_ingest_feeds_the_ledger_and_scores_the_game(
    broker: int, ledger: Ledger, table: Table
) -> None:
    changes: list[tuple[str, wire.Topic]] = []

    class Follower:
        def changed(self, table: str, kind: wire.Topic) -> None:
            changes.append((table, kind))

    hub = Ingest(ledger, EVENT, "127.0.0.1", broker)
    hub.changes.follow(Follower())
    hub.start()
    try:
        table.publish("online", b"true", retain=True)
        table.publish("status", {"format": 1, "table": "T1", "state": "idle"}, retain=True)
        for event in _game("T1", ledger):
            table.publish("events", event)
        record = {"format": 1, "table": "T1", "game": "g1", "record": {"challenges": []}}
        table.publish("record", record, retain=True)
        wait_until(lambda: ledger.tables.record("T1", "g1") is not None
                   and ledger.events.last_seq("T1") == 4)
        assert ledger.admin.pairings(1)[0].result is Result.BLACK_WIN
        online, status, _ = ledger.tables.state("T1")
        assert online is True and status == {"format": 1, "table": "T1", "state": "idle"}
        # Followers are told after the commit and its acknowledgements: a moment later.
        wait_until(lambda: ("T1", wire.Topic.EVENTS) in changes)
        # A table of an earlier release published each record on record/<game>: still read.
        old = {"format": 1, "table": "T1", "game": "g0", "record": {"challenges": []}}
        table.publish("record/g0", old, retain=True)
        wait_until(lambda: ledger.tables.record("T1", "g0") is not None,
                   what="an earlier release's record")
    finally:
        hub.stop()


def test_ingest_refuses_payloads_that_contradict_their_topic(
    broker: int, ledger: Ledger, table: Table
) -> None:
    hub = Ingest(ledger, EVENT, "127.0.0.1", broker)
    hub.start()
    try:
        table.publish("events", new_game("T2", 1, "g1"))  # names T2 on T1's topic
        table.publish("status", {"format": 1, "table": "T9"}, retain=True)
        table.publish("events", b"{not json")
        table.publish("events", _game("T1", ledger)[0])
        wait_until(lambda: ledger.events.last_seq("T1") == 1)
        wait_until(lambda: len(ledger.events.rejections()) == 3)
        assert ledger.events.of_table("T2") == []
        assert ledger.tables.state("T1")[1] is None
        # The same seq, another content.
        table.publish("events", {**_game("T1", ledger)[0], "game": "other"})
        wait_until(lambda: len(ledger.events.rejections()) == 4)
        assert ledger.events.of_table("T1") == [_game("T1", ledger)[0]]
    finally:
        hub.stop()


def test_ingest_persistent_session_gets_what_was_sent_while_the_hub_was_down(
    broker: int, ledger: Ledger, table: Table
) -> None:
    hub = Ingest(ledger, EVENT, "127.0.0.1", broker)
    hub.start()
    hub.stop()  # the broker keeps the session and queues QoS 1 messages for it
    for event in _game("T1", ledger):
        table.publish("events", event)
    assert ledger.events.last_seq("T1") == 0
    again = Ingest(ledger, EVENT, "127.0.0.1", broker)
    again.start()
    try:
        wait_until(lambda: ledger.events.last_seq("T1") == 4)
        assert ledger.events.gaps("T1") == []
        assert ledger.admin.pairings(1)[0].result is Result.BLACK_WIN
    finally:
        again.stop()


def test_ingest_publishes_retained_assignments(
    broker: int, ledger: Ledger, table: Table
) -> None:
    hub = Ingest(ledger, EVENT, "127.0.0.1", broker)
    hub.start()
    try:
        hub.publish_round(1)
        got = threading.Event()
        topic = table.prefix + "assignment"

        def note(_c: mqtt.Client, _u: Any, msg: mqtt.MQTTMessage) -> None:
            table.received[msg.topic] = msg.payload
            got.set()

        table.client.on_message = note
        table.client.subscribe(topic, qos=1)  # subscribing after: the retained copy comes
        assert got.wait(10)
        assert json.loads(table.received[topic]) == {
            "format": 1, "round": 1, "board": 1, "white": "Ana", "black": "Ben",
            "pairing": ledger.admin.pairings(1)[0].pairing_id,
        }
        got.clear()
        hub.publish_assignment("T1", None)
        assert got.wait(10)
        assert table.received[topic] == b""
    finally:
        hub.stop()


def test_ingest_carries_on_after_a_broker_restart(tmp_path: Path, ledger: Ledger) -> None:
    broker = Mosquitto(tmp_path / "restarting", persistent=True)
    broker.start()
    hub = Ingest(ledger, EVENT, "127.0.0.1", broker.port)
    hub.start()
    try:
        table = Table(broker.port, "T1")
        table.publish("events", _game("T1", ledger)[0])
        wait_until(lambda: ledger.events.last_seq("T1") == 1)
        table.close()
        broker.stop()
        wait_until(lambda: not hub.connected.is_set())
        broker.start()
        assert hub.connected.wait(30), "the hub did not reconnect"
        table = Table(broker.port, "T1")
        for event in _game("T1", ledger)[1:]:
            table.publish("events", event)
        wait_until(lambda: ledger.events.last_seq("T1") == 4)
        table.close()
        assert ledger.events.gaps("T1") == []
        assert ledger.admin.pairings(1)[0].result is Result.BLACK_WIN
    finally:
        hub.stop()
        broker.stop()
