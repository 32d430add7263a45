"""The hub on a TLS broker: ``--broker mqtts://... --ca-file``. A sim table (``gg-arbiter run
--sim``, mqtts:// with ca_file) plays a game that the hub ingests, and the hub's
assignment reaches the table; every way TLS can go wrong stops the hub (and its
subcommands) with exit 2 and one line, never a plain fallback."""

from __future__ import annotations

import json
import logging
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arbiter.fleet.outbox import Cursor, Outbox
from arbiter.fleet.payloads import event_payload
from arbiter.hub.ingest import Ingest
from arbiter.hub.ledger import Ledger, canonical
from arbiter.mqtt.tls import client_context
from tests.support.mqtt import Mosquitto, make_tls, tls_mosquitto
from tests.support.spawn import Session, free_port, gg_arbiter
from tests.support.waiting import WAIT, wait_until
from tests.support.web import FAST_CONFIG, PIN, http_json, play

pytestmark = pytest.mark.timeout(180)
EVENT = "tls"
#: A whole game to a captured Flag.
GAME = [("W:SPY", "B:5*G"), ("B:PVT", "W:SPY"), ("W:PVT", "B:PVT"), ("W:1LT", "B:FLG")]


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    # The certificate names localhost only: 127.0.0.1 is a name it was not made for.
    with tls_mosquitto(tmp_path / "broker", "localhost") as b:
        yield b


class TableWeb:
    """A sim table's web API: status, and its simulator's slots."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.web: Any = type("Web", (), {"port": port})()

    def call(self, method: str, path: str, body: Any = None) -> Any:
        code, answer = http_json(self.web, method, path, body)
        assert code < 300, (method, path, code, answer)
        return answer

    def status(self) -> dict[str, Any]:
        return dict(self.call("GET", "/api/status"))

    def put(self, slot: str, piece: str) -> None:
        self.call("PUT", f"/api/sim/slots/{slot}", {"piece": piece})

    def clear(self, slot: str) -> None:
        self.call("DELETE", f"/api/sim/slots/{slot}")


def _start(args: list[str], ready: str) -> Session:
    session = Session(args)
    try:
        session.expect(ready)
    except AssertionError:
        _stop(session)
        raise
    return session


def _stop(session: Session) -> None:
    if session.proc.poll() is None:
        session.proc.terminate()
        try:
            session.proc.wait(WAIT)
        except subprocess.TimeoutExpired:
            session.kill()


def _held(ledger: Path, table: str) -> list[str]:
    """The hub ledger's events of ``table`` in seq order, read beside the running hub."""
    if not ledger.exists():
        return []
    db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True, timeout=30)
    try:
        rows = db.execute("SELECT payload FROM events WHERE table_name=? ORDER BY seq",
                          (table,)).fetchall()
    except sqlite3.OperationalError:  # no schema yet
        return []
    finally:
        db.close()
    return [canonical(json.loads(p)) for (p,) in rows]


def _journal_events(data: Path, table: str) -> list[str]:
    pending = Outbox(data).pending(Cursor(), 1_000_000)
    return [canonical(event_payload(p.item, table=table, seq=p.seq))
            for p in pending if p.seq is not None]


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
    table_web = TableWeb(free_port())
    hub = _start([*hub_args, "--host", "127.0.0.1", "--port", str(free_port())], "hub web on")
    table = _start(["run", "--sim", "--config", str(config), "--data", str(table_data),
                    "--host", "127.0.0.1", "--port", str(table_web.port)], "gg-arbiter ready")
    try:
        assert any(f"from mqtts://localhost:{broker.tls_port}" in ln for ln in hub.lines)
        status = table_web.status
        wait_until(lambda: status()["broker"]["state"] == "connected", what="table on TLS")
        for attacker, defender in GAME:
            play(table_web.put, table_web.clear, status, attacker, defender)
        assert status()["state"] == "game_over"
        expected = _journal_events(table_data, "1")
        assert len(expected) >= len(GAME) + 1
        ledger = hub_data / "hub.sqlite"
        wait_until(lambda: _held(ledger, "1") == expected, timeout=3 * WAIT,
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
        _stop(table)
        _stop(hub)


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
                with caplog.at_level(logging.ERROR, logger="arbiter.hub.ingest"):
                    wait_until(lambda: any("does not verify" in r.getMessage()
                                           for r in caplog.records),
                               what="the hub logs why it cannot reconnect")
                    assert not ingest.connected.is_set()  # and never connects in plain
            finally:
                swapped.stop()
        finally:
            ingest.stop()
