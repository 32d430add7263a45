"""A table serves the hub's resend requests on a real Mosquitto: the events asked for go out
again byte for byte, the cursor stays, a request is served once, one for another table or
for events the table never had changes nothing, and an offline table serves the retained
request when it comes back."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from arbiter.fleet.errors import ResendError
from arbiter.fleet.link import FleetLink
from arbiter.fleet.outbox import CursorFile
from arbiter.fleet.resend import ResendRequest, ServedFile
from tests.fleet.conftest import GAME, TableFactory
from tests.support.mqtt import Mosquitto, Proxy, Subscriber
from tests.support.waiting import wait_until

pytestmark = pytest.mark.timeout(120)

TOPIC = "gg/demo/table/7/resend"
ALL_EVENTS = len(GAME) + 2  # new game, the challenges, game over


def play(table: Any) -> None:
    for attacker, defender in GAME:
        table.rig.challenge(attacker, defender)
        table.rig.empty()


class Hub:
    """Publishes retained resend requests as the hub does."""

    def __init__(self, port: int) -> None:
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2)
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()

    def ask(self, request: dict[str, Any], topic: str = TOPIC) -> None:
        payload = json.dumps({"format": 1, **request}).encode()
        self.client.publish(topic, payload, qos=1, retain=True).wait_for_publish(10)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def event_bytes(sub: Subscriber) -> list[tuple[int, bytes]]:
    return [(json.loads(m.payload)["seq"], m.payload) for m in sub.on("/events")]


def played(table: Any, sub: Subscriber, tmp_path: Path) -> Path:
    """Play the whole game at ``table``; once ``sub`` has every event and the broker
    acknowledged each, the table's data directory."""
    play(table)
    sub.wait(lambda s: len(s.events()) == ALL_EVENTS, what="the whole game")
    data = tmp_path / "data"
    wait_until(lambda: CursorFile(data).load().seq == ALL_EVENTS, what="every event acked")
    return data


def served(data: Path) -> int:
    """The id of the last request the table served (0: none)."""
    ids = ServedFile(data).load()
    return ids[-1] if ids else 0


@pytest.fixture
def hub(broker: Mosquitto) -> Any:
    h = Hub(broker.port)
    yield h
    h.close()


def test_the_events_asked_for_go_out_again_byte_for_byte_once(
    broker: Mosquitto, make_table: TableFactory, hub: Hub, tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="arbiter.fleet.resend_service")
    sub = Subscriber(broker.port)
    table = make_table(broker.url)
    data = played(table, sub, tmp_path)
    first = dict(event_bytes(sub))
    status = sub.on("/status")[-1].json()
    assert status["event_seq"] == ALL_EVENTS  # what the hub compares with its ledger

    hub.ask({"table": "7", "id": 1, "ranges": [[2, 3], [6, 6]]})
    sub.wait(lambda s: len(s.events()) == ALL_EVENTS + 3, what="events 2, 3 and 6 again")
    again = event_bytes(sub)[ALL_EVENTS:]
    assert again == [(2, first[2]), (3, first[3]), (6, first[6])]
    wait_until(lambda: served(data) == 1, what="request 1 kept as served")
    assert CursorFile(data).load().seq == ALL_EVENTS  # the cursor never moved back

    # The table restarts its link: the retained request 1 comes again and is not served.
    # Request 2 (after it on the same topic) is, which proves request 1 was handled first.
    old = table.link
    assert old is not None
    old.close()
    table.link = FleetLink(old.settings, data, table.arbiter.fleet, store=table.arbiter.store,
                           status=table.arbiter.status)
    table.link.start()
    # ... and the table says it ignores it (issue 27: not in silence).
    wait_until(lambda: "ignoring resend request 1: served already" in caplog.text,
               what="the ignored request logged")
    hub.ask({"table": "7", "id": 2, "ranges": [[1, 1]]})
    wait_until(lambda: served(data) == 2, what="request 2 served")
    sub.wait(lambda s: len(s.events()) == ALL_EVENTS + 4, what="event 1 again")
    assert event_bytes(sub)[ALL_EVENTS + 3:] == [(1, first[1])]


def test_a_request_for_another_table_or_unknown_events_changes_nothing(
    broker: Mosquitto, make_table: TableFactory, hub: Hub, tmp_path: Path
) -> None:
    sub = Subscriber(broker.port)
    table = make_table(broker.url)
    data = played(table, sub, tmp_path)

    hub.ask({"table": "8", "id": 5, "ranges": [[1, 7]]})  # on table 7's topic: refused
    hub.ask({"table": "7", "id": 6, "ranges": [[50, 60]]})  # never had those
    wait_until(lambda: served(data) == 6, what="request 6 handled")
    hub.ask({"table": "7", "id": 7, "ranges": [[4, 4]]})  # proves the two above are done
    wait_until(lambda: served(data) == 7, what="request 7 served")
    sub.wait(lambda s: len(s.events()) == ALL_EVENTS + 1, what="event 4 again")
    assert [seq for seq, _ in event_bytes(sub)] == [*range(1, ALL_EVENTS + 1), 4]
    assert CursorFile(data).load().seq == ALL_EVENTS
    # A fresh ledger's request has an id of its own, lower or not: it is served all the
    # same (issue 27: a table once ignored every id up to the last it served).
    hub.ask({"table": "7", "id": 3, "ranges": [[5, 5]]})
    wait_until(lambda: served(data) == 3, what="request 3 served")
    sub.wait(lambda s: len(s.events()) == ALL_EVENTS + 2, what="event 5 again")
    assert [seq for seq, _ in event_bytes(sub)][-1] == 5


def test_an_offline_table_serves_the_request_when_it_comes_back(
    broker: Mosquitto, proxy: Proxy, make_table: TableFactory, hub: Hub, tmp_path: Path
) -> None:
    sub = Subscriber(broker.port)
    table = make_table(f"mqtt://127.0.0.1:{proxy.port}")
    data = played(table, sub, tmp_path)
    first = dict(event_bytes(sub))

    proxy.mode = "refuse"
    proxy.cut()
    wait_until(lambda: table.arbiter.status()["broker"]["state"] == "reconnecting",
               what="the table offline")
    hub.ask({"table": "7", "id": 1, "ranges": [[1, 2]]})
    assert served(data) == 0
    proxy.mode = "forward"
    sub.wait(lambda s: len(s.events()) == ALL_EVENTS + 2, what="events 1 and 2 again")
    assert event_bytes(sub)[ALL_EVENTS:] == [(1, first[1]), (2, first[2])]
    wait_until(lambda: served(data) == 1, what="request 1 kept as served")


@pytest.mark.parametrize("payload", [
    b"{", b"[]", b'{"format":2,"table":"7","id":1,"ranges":[[1,1]]}',
    b'{"format":1,"table":"7","id":0,"ranges":[[1,1]]}',
    b'{"format":1,"table":"7","id":1,"ranges":[]}',
    b'{"format":1,"table":"7","id":1,"ranges":[[3,2]]}',
    b'{"format":1,"table":"7","id":1,"ranges":[[0,2]]}',
    b'{"format":1,"table":"7","id":true,"ranges":[[1,2]]}',
    b'{"format":1,"id":1,"ranges":[[1,2]]}',
])
def test_a_malformed_request_is_refused(payload: bytes) -> None:
    with pytest.raises(ResendError):
        ResendRequest.from_payload(payload)


def test_a_request_counts_each_number_once() -> None:
    request = ResendRequest.from_payload(
        b'{"format":1,"table":"7","id":3,"ranges":[[5,9],[1,2],[8,12]]}')
    assert request is not None
    assert request.ranges == ((1, 2), (5, 9), (8, 12))
    assert request.count() == 2 + 8  # 1-2 and 5-12
    assert request.wants(12) and not request.wants(3) and request.last == 12
    assert ResendRequest.from_payload(b"") is None
