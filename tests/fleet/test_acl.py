"""``gg-arbiter broker-config``: its Mosquitto files, started for real, lock the tables in."""

from __future__ import annotations

import json
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest

from arbiter.app.cli import main
from arbiter.venue.broker_logins import password_line
from tests.fleet.conftest import GAME, TableFactory, secret
from tests.support.mqtt import Mosquitto, Subscriber, seqs
from tests.support.waiting import wait_until

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def venue(locked: tuple[Mosquitto, Path]) -> tuple[Mosquitto, Path]:
    """The broker ``broker-config`` wrote (see ``locked``): anonymous clients refused."""
    _broker, out = locked
    conf = (out / "mosquitto.conf").read_text().splitlines()
    assert "allow_anonymous false" in conf and "listener 1883" in conf
    return locked


def _send(client: mqtt.Client, topic: str, payload: bytes, retain: bool = False) -> None:
    client.publish(topic, payload, qos=1, retain=retain).wait_for_publish(5)


def test_each_table_writes_only_its_prefix_and_reads_only_its_assignment(
    venue: tuple[Mosquitto, Path]
) -> None:
    broker, out = venue
    # One connection per login: client ids are logins (use_username_as_clientid), so a
    # second connection with the same password would take the first one's place.
    hub = Subscriber(broker.port, "gg/demo/#", username="hub", password=secret(out, "hub"))
    t1 = Subscriber(broker.port, "gg/#", username="table-1", password=secret(out, "table-1"))
    # A table writing under another table's prefix is dropped; its own message after it
    # proves the broker has handled both (one connection delivers in order).
    _send(t1.client, "gg/demo/table/2/events", b'{"forged":true}')
    _send(t1.client, "gg/demo/table/1/events", b'{"seq":1}')
    hub.wait(lambda s: s.on("table/1/events"), what="table 1's own event")
    assert not hub.on("table/2/events")

    _send(hub.client, "gg/demo/table/2/assignment", b'{"for":2}', retain=True)
    _send(hub.client, "gg/demo/table/1/assignment", b'{"for":1}', retain=True)
    t1.wait(lambda s: s.on("table/1/assignment"), what="table 1 reads its assignment")
    # Table 1 reads nothing else: not table 2's assignment, not its own events.
    assert [m.topic for m in t1.messages] == ["gg/demo/table/1/assignment"]
    # A table cannot write an assignment (the hub alone does).
    _send(t1.client, "gg/demo/table/1/assignment", b'{"forged":true}', retain=True)
    _send(t1.client, "gg/demo/table/1/status", b"{}")
    hub.wait(lambda s: s.on("table/1/status"))
    assert all(json.loads(m.payload) != {"forged": True} for m in hub.on("/assignment"))

    refused = Subscriber(broker.port, username="table-1", password="wrong", wait=False)
    wait_until(lambda: refused.refused, what="a wrong password refused")
    for s in (hub, t1, refused):
        s.close()


def test_the_hub_alone_writes_resend_requests_and_each_table_reads_only_its_own(
    venue: tuple[Mosquitto, Path]
) -> None:
    broker, out = venue
    hub = Subscriber(broker.port, "gg/demo/#", username="hub", password=secret(out, "hub"))
    t1 = Subscriber(broker.port, "gg/#", username="table-1", password=secret(out, "table-1"))
    t2 = Subscriber(broker.port, "gg/demo/table/2/resend", username="table-2",
                    password=secret(out, "table-2"))
    # A table cannot ask another table (nor itself) for a resend; the hub cannot pose as a
    # table. Each forged message is followed by an allowed one on the same connection.
    _send(t1.client, "gg/demo/table/2/resend", b'{"forged":2}', retain=True)
    _send(t1.client, "gg/demo/table/1/resend", b'{"forged":1}', retain=True)
    _send(hub.client, "gg/demo/table/1/status", b'{"forged":"status"}', retain=True)
    _send(hub.client, "gg/demo/table/1/events", b'{"forged":"event"}')
    _send(t1.client, "gg/demo/table/1/status", b'{"own":1}')
    _send(hub.client, "gg/demo/table/2/resend", b'{"for":2}', retain=True)
    _send(hub.client, "gg/demo/table/1/resend", b'{"for":1}', retain=True)
    t1.wait(lambda s: s.on("table/1/resend"), what="table 1 reads its resend request")
    t2.wait(lambda s: s.on("table/2/resend"), what="table 2 reads its resend request")
    hub.wait(lambda s: s.on("table/1/resend") and s.on("table/1/status"))
    assert [m.topic for m in t1.messages] == ["gg/demo/table/1/resend"]
    assert [m.json() for m in t1.messages] == [{"for": 1}]
    assert [m.json() for m in t2.messages] == [{"for": 2}]
    assert [m.json() for m in hub.messages] == [{"own": 1}, {"for": 2}, {"for": 1}]
    for s in (hub, t1, t2):
        s.close()


def test_a_table_with_its_password_file_publishes_its_game(
    venue: tuple[Mosquitto, Path], make_table: TableFactory
) -> None:
    broker, out = venue
    hub = Subscriber(broker.port, "gg/demo/#", username="hub", password=secret(out, "hub"))
    password_file = out / "secrets" / "table-1.password"
    table = make_table(f"mqtt://table-1@127.0.0.1:{broker.port}", table="1",
                       extra=f'password_file = "{password_file}"\n')
    for attacker, defender in GAME:
        table.rig.challenge(attacker, defender)
        table.rig.empty()
    hub.wait(lambda s: s.records(1), what="the record")
    assert seqs(hub.events()) == list(range(1, len(GAME) + 3))
    hub.close()


def test_password_line_is_mosquittos_pbkdf2_format() -> None:
    line = password_line("hub", "pw", salt=b"0123456789ab")
    user, _, rest = line.partition(":")
    assert user == "hub"
    assert rest.split("$")[1:3] == ["7", "101"]
    assert password_line("hub", "pw", salt=b"0123456789ab") == line
    assert password_line("hub", "px", salt=b"0123456789ab") != line


def test_broker_config_refuses_to_overwrite(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    args = ["broker-config", "--tables", "1", "--event", "demo", "--out", str(tmp_path)]
    assert main(args) == 0
    first = (tmp_path / "passwd").read_text()
    assert main(args) == 2
    assert "--force" in capsys.readouterr().err
    assert main([*args, "--force"]) == 0
    assert (tmp_path / "passwd").read_text() != first
