"""broker-config's Mosquitto bounds each login (issue 27, item 5) and keeps its log quiet
(issue 26): its config read, and run for real."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.reasoncodes import ReasonCode

from arbiter import wire
from arbiter.app.cli import main
from arbiter.mqtt.address import table_session_login
from tests.support.mqtt import Mosquitto, Subscriber
from tests.support.spawn import free_port

pytestmark = pytest.mark.timeout(120)
EVENT = "demo"
#: A packet's header and topic beside its payload: at most this (MQTT's fixed header is 5
#: bytes, a topic ``gg/<32>/table/<t>/status`` well under 200, a packet id 2).
OVERHEAD = 256


def _conf(tmp_path: Path, port: int = 1883) -> tuple[Path, dict[str, list[str]]]:
    out = tmp_path / "venue"
    assert main(["broker-config", "--tables", "2", "--event", EVENT, "--out", str(out),
                 "--listen", "127.0.0.1", "--listen-port", str(port)]) == 0
    options: dict[str, list[str]] = {}
    for line in (out / "mosquitto.conf").read_text().splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.partition(" ")
            options.setdefault(key, []).append(value)
    return out, options


def test_config_bounds_packets_queues_and_saves_and_logs_no_saves(tmp_path: Path) -> None:
    _out, conf = _conf(tmp_path)
    largest = max(wire.MAX_BYTES.values())  # the wire's largest message: a record
    (packet,) = map(int, conf["max_packet_size"])
    assert largest + OVERHEAD <= packet <= 2 * largest  # every real message, little more
    (messages,), (size,) = conf["max_queued_messages"], conf["max_queued_bytes"]
    # A table's session holds a day of its events (43 a game at most), and bytes bound it.
    assert int(messages) >= 43 * 10 and 0 < int(size) <= 16 * 1024 * 1024
    # The broker's memory is bounded, above what a long event's records need (30 games a
    # table, each record at the wire's largest).
    (limit,) = map(int, conf["memory_limit"])
    assert 2 * 30 * largest < limit <= 256 * 1024 * 1024
    # Never a save per message, nor every second.
    assert conf["autosave_on_changes"] == ["false"] and int(conf["autosave_interval"][0]) >= 10
    # 'information' is where "Saving in-memory database" goes; errors and notices stay.
    assert sorted(conf["log_type"]) == ["error", "notice", "warning"]


def test_acl_gives_each_table_session_of_the_hub_that_tables_events_and_records_only(
    tmp_path: Path
) -> None:
    out, _conf_options = _conf(tmp_path)
    acl = (out / "acl").read_text().split("\n\n")
    block = next(b for b in acl if f"user {table_session_login('hub', '2')}\n" in b)
    assert [ln for ln in block.splitlines() if ln.startswith("topic")] == [
        f"topic read gg/{EVENT}/table/2/events", f"topic read gg/{EVENT}/table/2/record/#"]
    users = [ln.split(":")[0] for ln in (out / "passwd").read_text().splitlines()]
    assert {"hub-table-1", "hub-table-2"} <= set(users)


def test_acl_lets_a_table_write_its_four_topics_by_name_only(tmp_path: Path) -> None:
    """No pattern: the broker keeps at most one retained message a topic it may write."""
    out, _conf_options = _conf(tmp_path)
    block = next(b for b in (out / "acl").read_text().split("\n\n")
                 if "user table-2\n" in b)
    writes = [ln.removeprefix("topic write ") for ln in block.splitlines()
              if ln.startswith("topic write")]
    assert writes == [f"gg/{EVENT}/table/2/{t}" for t in ("online", "status", "events",
                                                           "record")]


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[tuple[Mosquitto, Path]]:
    """broker-config's broker, started on its config exactly as written."""
    port = free_port()
    out, _conf_options = _conf(tmp_path, port)
    broker = Mosquitto.with_config(tmp_path / "broker", (out / "mosquitto.conf").read_text(),
                                   port).start()
    try:
        yield broker, out
    finally:
        broker.stop()


def _secret(out: Path, user: str) -> str:
    return (out / "secrets" / f"{user}.password").read_text().strip()


class _Table:
    """A table's login (table 1's by default), noting when the broker drops it."""

    def __init__(self, port: int, out: Path, table: str = "1") -> None:
        self.dropped = threading.Event()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="")
        self.client.username_pw_set(f"table-{table}", _secret(out, f"table-{table}"))
        self.client.on_disconnect = lambda *_args: self.dropped.set()
        self.client.connect("127.0.0.1", port, keepalive=30)
        self.client.loop_start()

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def test_an_oversized_publish_disconnects_its_sender_and_reaches_no_one(
    broker: tuple[Mosquitto, Path]
) -> None:
    mosq, out = broker
    hub = Subscriber(mosq.port, f"gg/{EVENT}/#", username="hub", password=_secret(out, "hub"))
    table = _Table(mosq.port, out)
    try:
        topic = f"gg/{EVENT}/table/1/record"
        # The wire's largest record passes...
        table.client.publish(topic, b"r" * wire.MAX_BYTES[wire.Topic.RECORD], qos=1,
                             retain=True).wait_for_publish(10)
        hub.wait(lambda s: s.on("/record"), what="the largest legitimate record")
        # ... the red team's 50 MB retained record (and anything past the bound) does not.
        table.client.publish(topic, b"x" * (50 * 1024 * 1024), qos=1, retain=True)
        assert table.dropped.wait(30), "the broker kept a client sending 50 MB"
        assert all(len(m.payload) <= wire.MAX_BYTES[wire.Topic.RECORD] for m in hub.messages)
        hub.close()  # one connection a login: the hub's comes again, as after a restart
        late = Subscriber(mosq.port, topic, username="hub", password=_secret(out, "hub"))
        late.wait(lambda s: s.messages, what="the retained record")
        # What stays retained is the legitimate record, not the flood.
        assert [len(m.payload) for m in late.messages] == [wire.MAX_BYTES[wire.Topic.RECORD]]
        late.close()
    finally:
        table.close()
        hub.close()


def test_the_broker_saves_without_a_log_line_and_notes_logins(
    broker: tuple[Mosquitto, Path]
) -> None:
    mosq, out = broker
    table = _Table(mosq.port, out)
    table.client.publish(f"gg/{EVENT}/table/1/online", b"true", qos=1,
                         retain=True).wait_for_publish(10)
    table.close()
    mosq.stop()  # a clean stop saves the store (a line at 'information', the autosave's)
    assert list((out / "db").glob("*.db")), "the broker saved nothing"
    log = mosq.log.read_text()
    assert "as table-1" in log  # a login is a notice: still logged
    assert "Saving in-memory database" not in log


def _rss(pid: int) -> int:
    """A process's resident memory, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


#: Distinct record topics the flooding login tries (the red team's was one a game).
FLOOD_TOPICS = 5_000


def test_one_login_cannot_grow_the_retained_store_past_its_four_topics(
    broker: tuple[Mosquitto, Path]
) -> None:
    """Table 1 publishes 5,000 retained records of the wire's largest size, each on a topic
    of its own (``record/<n>``, an earlier release's form), and the largest retained
    payload on each topic it may write; the ACL refuses the first (a PUBACK saying so),
    the others replace one message each. Table 2's game still arrives whole, and what
    the broker saves of table 1 is at most four packets."""
    mosq, out = broker
    assert mosq.proc is not None
    (limit,) = [int(ln.split()[1]) for ln in mosq.conf.read_text().splitlines()
                if ln.startswith("memory_limit ")]
    (packet,) = [int(ln.split()[1]) for ln in mosq.conf.read_text().splitlines()
                 if ln.startswith("max_packet_size ")]
    hub = Subscriber(mosq.port, f"gg/{EVENT}/table/2/#", username="hub",
                     password=_secret(out, "hub"))
    refused: list[int] = []
    answered = threading.Semaphore(0)

    def on_publish(_c: object, _u: object, _mid: int, reason: ReasonCode, _p: object) -> None:
        if reason.is_failure:
            refused.append(reason.value)
        answered.release()

    flood = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="", protocol=mqtt.MQTTv5)
    flood.username_pw_set("table-1", _secret(out, "table-1"))
    flood.max_inflight_messages_set(200)
    flood.on_publish = on_publish
    flood.connect("127.0.0.1", mosq.port, keepalive=30)
    flood.loop_start()
    two = _Table(mosq.port, out, "2")
    big = b"r" * wire.MAX_BYTES[wire.Topic.RECORD]
    try:
        for n in range(FLOOD_TOPICS):
            flood.publish(f"gg/{EVENT}/table/1/record/{n}", big, qos=1, retain=True)
        for kind in wire.TABLE_WRITES:  # each replaced many times: one message kept
            for _ in range(20):
                flood.publish(wire.topic(EVENT, "1", kind), big, qos=1, retain=True)
        # Table 2 meanwhile: its events and its record reach the hub.
        for seq in range(1, 4):
            two.client.publish(wire.topic(EVENT, "2", wire.Topic.EVENTS), b'{"seq": %d}' % seq,
                               qos=1)
        two.client.publish(wire.topic(EVENT, "2", wire.Topic.RECORD), b'{"game": 1}', qos=1,
                           retain=True).wait_for_publish(30)
        for _ in range(FLOOD_TOPICS + 20 * len(wire.TABLE_WRITES)):
            assert answered.acquire(timeout=60), "the broker stopped answering table 1"
        hub.wait(lambda s: len(s.events()) == 3 and s.on("/record"), what="table 2's game")
        assert len(refused) == FLOOD_TOPICS and set(refused) == {0x87}  # not authorized
        # A late reader of table 1 finds one message on each topic it may write.
        late = Subscriber(mosq.port, f"gg/{EVENT}/table/1/#", username="hub",
                          password=_secret(out, "hub"))
        late.wait(lambda s: len(s.messages) == len(wire.TABLE_WRITES),
                  what="table 1's retained messages")
        assert sorted(m.topic.rsplit("/", 1)[1] for m in late.messages) == sorted(
            k.value for k in wire.TABLE_WRITES)
        late.close()
        assert _rss(mosq.proc.pid) < limit
    finally:
        flood.disconnect()
        flood.loop_stop()
        two.close()
        hub.close()
    mosq.stop()  # a clean stop saves the store: what a restart would hold
    (store,) = (out / "db").glob("*.db")
    # Table 1's four packets at most, table 2's small record, and the store's own bytes.
    assert store.stat().st_size < len(wire.TABLE_WRITES) * packet + 64 * 1024
    assert "out of memory" not in mosq.log.read_text()
