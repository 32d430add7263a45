"""The hub on a TLS broker: ``--broker mqtts://... --ca-file``. A sim table (``gg-arbiter run
--sim``, mqtts:// with ca_file) plays a game that the hub ingests, and the hub's
assignment reaches the table; every way TLS can go wrong stops the hub (and its
subcommands) with exit 2 and one line, never a plain fallback."""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from arbiter.hub.broker_link import Ingest
from arbiter.hub.ledger import Ledger
from arbiter.mqtt.tls import client_context
from tests.support.mqtt import Mosquitto, make_tls, tls_mosquitto
from tests.support.spawn import free_port, gg_arbiter
from tests.support.venue import Node, SimTable, held
from tests.support.waiting import WAIT, wait_until
from tests.support.web import FAST_CONFIG, PIN

pytestmark = pytest.mark.timeout(180)
EVENT = "tls"
#: A whole game to a captured Flag.
GAME = [("W:SPY", "B:5*G"), ("B:PVT", "W:SPY"), ("W:PVT", "B:PVT"), ("W:1LT", "B:FLG")]


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    # The certificate names localhost only: 127.0.0.1 is a name it was not made for.
    with tls_mosquitto(tmp_path / "broker", "localhost") as b:
        yield b


def test_table_and_hub_over_tls_a_game_arrives_and_the_assignment_goes_back(
    broker: Mosquitto, tmp_path: Path
) -> None:
    assert broker.tls
    url, ca = broker.tls_url(), str(broker.tls.ca)
    hub_data, table_data = tmp_path / "hub", tmp_path / "table"
    hub_args = ["hub", "--event", EVENT, "--data", str(hub_data), "--broker", url,
                "--ca-file", ca]
    config = tmp_path / "table.toml"
    config.write_text(FAST_CONFIG + f'\n[web]\nadmin_pin = "{PIN}"\n\n[tournament]\n'
                      f'broker = "{url}"\nca_file = "{ca}"\nevent = "{EVENT}"\ntable = "1"\n')
    hub_port, table_port = free_port(), free_port()
    hub = Node([*hub_args, "--host", "127.0.0.1", "--port", str(hub_port)], hub_port,
               "hub web on")
    table = SimTable("1", Node(["run", "--sim", "--config", str(config), "--data",
                                str(table_data), "--host", "127.0.0.1", "--port",
                                str(table_port)], table_port, "gg-arbiter ready"), table_data)
    try:
        hub.start()
        table.node.start()
        assert hub.session is not None
        assert any(f"from mqtts://localhost:{broker.tls_port}" in ln for ln in hub.session.lines)
        status = table.status
        wait_until(lambda: status()["broker"]["state"] == "connected", what="table on TLS")
        for attacker, defender in GAME:
            table.challenge(attacker, defender)
        assert status()["state"] == "game_over"
        expected = table.expected()
        assert len(expected) >= len(GAME) + 1
        ledger = hub_data / "hub.sqlite"
        wait_until(lambda: held(ledger, "1") == expected, timeout=3 * WAIT,
                   what="the hub holds the table's events, sent over TLS")

        # A subcommand beside the serving hub publishes over TLS too.
        for name in ("Ana", "Ben"):
            assert subprocess.run([*gg_arbiter(), *hub_args, "players", "add", name],
                                  capture_output=True, timeout=60).returncode == 0
        assert subprocess.run([*gg_arbiter(), *hub_args, "pair", "--system", "round-robin"],
                              capture_output=True, timeout=60).returncode == 0
        done = subprocess.run([*gg_arbiter(), *hub_args, "assign", "1", "1", "1"],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        wait_until(lambda: "Round 1" in str(status().get("assignment")),
                   what="the table shows the assignment sent over TLS")
    finally:
        table.node.stop()
        hub.stop()


@pytest.mark.parametrize("trouble", [
    "another CA", "missing CA file", "name mismatch", "TLS to a plain port",
    "plain to the TLS port", "CA file for plain",
])
@pytest.mark.parametrize("command", [[], ["publish", "1"]], ids=["serve", "publish"])
def test_hub_stops_on_tls_trouble_with_one_line(
    trouble: str, command: list[str], broker: Mosquitto, tmp_path: Path
) -> None:
    assert broker.tls
    url, ca = broker.tls_url(), broker.tls.ca
    expect = ""
    if trouble == "another CA":
        ca, expect = make_tls(tmp_path / "other").ca, "does not verify"
    elif trouble == "missing CA file":
        ca, expect = tmp_path / "missing.pem", "cannot read it"
    elif trouble == "name mismatch":
        url, expect = broker.tls_url("127.0.0.1"), "is not for the name '127.0.0.1'"
    elif trouble == "TLS to a plain port":
        url, expect = f"mqtts://localhost:{broker.port}", "answers plain MQTT, not TLS"
    elif trouble == "plain to the TLS port":
        url, expect = f"mqtt://localhost:{broker.tls_port}", "speaks TLS: use mqtts://"
    else:
        url, expect = broker.url, "--ca-file is for an mqtts:// broker"
    args = ["hub", "--event", EVENT, "--data", str(tmp_path / "hub"), "--broker", url,
            "--host", "127.0.0.1", "--port", "0", *command]
    if url.startswith("mqtts") or trouble == "CA file for plain":
        args[-len(command) or len(args):len(args) - len(command)] = ["--ca-file", str(ca)]
    done = subprocess.run([*gg_arbiter(), *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and expect in lines[0], done.stderr
    assert "hub serving" not in done.stdout


def test_serving_hub_says_once_why_when_the_broker_comes_back_with_another_certificate(
    broker: Mosquitto, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    assert broker.tls and broker.tls_port
    with Ledger(tmp_path / "hub.sqlite", EVENT) as ledger:
        ingest = Ingest(ledger, EVENT, "localhost", broker.tls_port,
                        tls=client_context(broker.tls.ca))
        ingest.start()
        try:
            broker.stop()
            swapped = Mosquitto(tmp_path / "swapped", port=broker.port,
                                tls=make_tls(tmp_path / "other", "localhost"),
                                tls_port=broker.tls_port).start()
            try:
                with caplog.at_level(logging.ERROR, logger="arbiter.hub.broker_link"):
                    wait_until(lambda: any("does not verify" in r.getMessage()
                                           for r in caplog.records),
                               what="the hub logs why it cannot reconnect")
                    assert not ingest.connected.is_set()  # and never connects in plain
            finally:
                swapped.stop()
        finally:
            ingest.stop()
