"""A venue set up by ``gg-arbiter broker-config`` and run on its files as written (issue 19):
the listen address, client ids bound to logins, a queue that holds a round for a hub that
is away, and a table that joins with its one file. Real Mosquitto, real ``run --sim``."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from arbiter.app.cli import main
from arbiter.mqtt.address import table_session_login
from arbiter.venue.brokerconf import QUEUE_PER_CLIENT
from tests.fleet.conftest import heard_online, secret
from tests.support.mqtt import Mosquitto, Subscriber
from tests.support.spawn import free_port
from tests.support.tools import require_tool
from tests.support.venue import Node
from tests.support.waiting import wait_until
from tests.support.web import FAST_CONFIG, PIN

pytestmark = pytest.mark.timeout(180)
EVENT = "demo"


@pytest.fixture
def written(tmp_path: Path) -> Iterator[tuple[Mosquitto, Path]]:
    """broker-config's files for 2 tables, listening on 127.0.0.1 only, and Mosquitto
    started on its ``mosquitto.conf`` exactly as written."""
    require_tool("mosquitto")
    out, port = tmp_path / "venue", free_port()
    assert main(["broker-config", "--tables", "2", "--event", EVENT, "--out", str(out),
                 "--listen", "127.0.0.1", "--listen-port", str(port)]) == 0
    conf = (out / "mosquitto.conf").read_text()
    assert f"listener {port} 127.0.0.1" in conf.splitlines()
    broker = Mosquitto.with_config(tmp_path / "broker", conf, port).start()
    try:
        yield broker, out
    finally:
        broker.stop()


class Client:
    """A paho client that counts how often the broker dropped it."""

    def __init__(self, port: int, user: str, password: str, client_id: str,
                 *, clean: bool = True, topic: str = "") -> None:
        self.dropped = 0
        self.received: list[mqtt.MQTTMessage] = []
        self.up = threading.Event()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id,
                                  clean_session=clean)
        self.client.username_pw_set(user, password)
        self.client.on_connect = self._connect
        self.client.on_disconnect = self._disconnect
        self.client.on_message = lambda _c, _u, m: self.received.append(m)
        self.topic = topic
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        wait_until(self.up.is_set, what=f"{user} connected")

    def _connect(self, client: mqtt.Client, _u: Any, _f: Any, reason: Any, _p: Any) -> None:
        if not reason.is_failure:
            if self.topic:
                client.subscribe(self.topic, qos=1)
            self.up.set()

    def _disconnect(self, _c: mqtt.Client, _u: Any, _f: Any, _r: Any, _p: Any) -> None:
        self.up.clear()
        self.dropped += 1

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def test_venue_a_table_login_cannot_take_the_hub_nor_another_table_by_client_id(
    written: tuple[Mosquitto, Path]
) -> None:
    broker, out = written
    hub = Client(broker.port, "hub", secret(out, "hub"), f"gg-hub-{EVENT}", clean=False,
                 topic=f"gg/{EVENT}/#")
    table2 = Client(broker.port, "table-2", secret(out, "table-2"), f"gg-{EVENT}-2")
    # Table 1's password with the hub's client id, then with table 2's, clean sessions.
    for stolen in (f"gg-hub-{EVENT}", f"gg-{EVENT}-2"):
        thief = Client(broker.port, "table-1", secret(out, "table-1"), stolen)
        thief.client.publish(f"gg/{EVENT}/table/1/status", b"{}", qos=1).wait_for_publish(5)
        thief.close()
    # The hub's commands beside it log in as organiser (their own id): an assignment
    # goes out and the serving hub stays.
    organiser = Client(broker.port, "organiser", secret(out, "organiser"), f"gg-hub-{EVENT}")
    organiser.client.publish(f"gg/{EVENT}/table/2/assignment", b'{"round":1}', qos=1,
                             retain=True).wait_for_publish(5)
    organiser.close()
    # The hub still holds its session: what table 2 publishes reaches it, and neither the
    # hub nor table 2 was ever dropped.
    table2.client.publish(f"gg/{EVENT}/table/2/events", b'{"seq":1}', qos=1).wait_for_publish(5)
    wait_until(lambda: any(m.topic.endswith("table/2/events") for m in hub.received),
               what="the hub hears table 2")
    assert any(m.topic.endswith("table/2/assignment") for m in hub.received)
    assert (hub.dropped, table2.dropped) == (0, 0)
    for c in (hub, table2):
        c.close()


def test_venue_broker_holds_a_tables_events_for_a_hub_that_is_away(
    written: tuple[Mosquitto, Path]
) -> None:
    broker, out = written
    # The hub's session for table 1 (its login, the hub's password) holds a table's whole
    # queue: Mosquitto's default for the whole hub lost 2,000 of 3,000 in a rehearsal; a
    # table's game is at most 43 events.
    count = QUEUE_PER_CLIENT
    login = table_session_login("hub", "1")
    hub = Client(broker.port, login, secret(out, "hub"), "h", clean=False,
                 topic=f"gg/{EVENT}/table/1/events")
    hub.close()  # away: its session (keyed by its login) keeps its subscription
    table = Client(broker.port, "table-1", secret(out, "table-1"), "t")
    infos = [table.client.publish(f"gg/{EVENT}/table/1/events", b'{"seq":%d}' % n, qos=1)
             for n in range(1, count + 1)]
    for info in infos:
        info.wait_for_publish(60)
    table.close()
    back = Client(broker.port, login, secret(out, "hub"), "h", clean=False)
    wait_until(lambda: len(back.received) >= count, timeout=120,
               what=f"the hub gets all {count} messages")
    assert [m.payload for m in back.received] == [b'{"seq":%d}' % n
                                                   for n in range(1, count + 1)]
    back.close()


def test_venue_a_table_joins_with_its_one_file(
    tmp_path: Path, written: tuple[Mosquitto, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    broker, out = written
    assert (out / "tables" / "table-1.password").stat().st_mode & 0o777 == 0o600
    # Copied to the table (a USB stick, scp): the file and its password, nothing else.
    stick = tmp_path / "stick"
    stick.mkdir()
    for name in ("table-1.toml", "table-1.password"):
        shutil.copy2(out / "tables" / name, stick / name)
    config, data = tmp_path / "table" / "config.toml", tmp_path / "table" / "data"
    config.parent.mkdir()
    config.write_text(FAST_CONFIG + f'\n[web]\nadmin_pin = "{PIN}"\n'
                      '\n[tournament]\nbroker = "mqtt://elsewhere:1"\nevent = "old"\n')
    assert main(["join", str(stick / "table-1.toml"), "--config", str(config),
                 "--data", str(data)]) == 0
    assert "table 1 of demo" in capsys.readouterr().out
    text = config.read_text()
    assert text.count("[tournament]") == 1 and "elsewhere" not in text
    assert 'battle_phrase = false' in text  # the rest of the config is kept
    assert (data / "broker.password").stat().st_mode & 0o777 == 0o600
    hub = Subscriber(broker.port, f"gg/{EVENT}/#", username="hub",
                     password=secret(out, "hub"))
    port = free_port()
    # No --broker, --event, --table, no password anywhere on the command line.
    table = Node(["run", "--sim", "--config", str(config), "--data", str(data),
                  "--host", "127.0.0.1", "--port", str(port)], port, "gg-arbiter ready").start()
    try:
        heard_online(table, hub, "the joined table")
    finally:
        table.stop()
        hub.close()


def test_venue_join_refuses_a_file_that_is_not_a_table_s(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    bad = tmp_path / "x.toml"
    bad.write_text('[tournament]\nbroker = "mqtt://h"\n')
    config = tmp_path / "c.toml"
    assert main(["join", str(bad), "--config", str(config)]) == 2
    assert "not a table's venue file" in capsys.readouterr().err
    assert not config.exists()


def test_venue_tls_table_file_names_its_ca_and_join_installs_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from arbiter.app.config import load_config

    for name in ("broker.pem", "broker.key", "venue-ca.pem"):
        (tmp_path / name).write_text(f"{name}\n")
    out = tmp_path / "venue"
    assert main(["broker-config", "--tables", "3", "--event", EVENT, "--out", str(out),
                 "--tls-cert", str(tmp_path / "broker.pem"), "--tls-key",
                 str(tmp_path / "broker.key"), "--tls-ca", str(tmp_path / "venue-ca.pem"),
                 "--host", "hall.local"]) == 0
    config, data = tmp_path / "t3" / "config.toml", tmp_path / "t3" / "data"
    assert main(["join", str(out / "tables" / "table-3.toml"), "--config", str(config),
                 "--data", str(data)]) == 0
    tournament = load_config(config).tournament
    assert tournament.broker is not None
    assert tournament.broker.url.startswith("mqtts://table-3@hall.local:8883")
    assert tournament.ca_file == config.parent / "broker-ca.pem"
    assert tournament.ca_file.read_text() == "venue-ca.pem\n"
    # --listen takes an address of this machine, not a name; --tls-ca goes with TLS.
    capsys.readouterr()
    assert main(["broker-config", "--tables", "1", "--event", EVENT, "--out",
                 str(tmp_path / "x"), "--listen", "hall.local"]) == 2
    assert "--listen" in capsys.readouterr().err
    assert main(["broker-config", "--tables", "1", "--event", EVENT, "--out",
                 str(tmp_path / "y"), "--tls-ca", str(tmp_path / "venue-ca.pem")]) == 2
    assert "--tls-ca" in capsys.readouterr().err
