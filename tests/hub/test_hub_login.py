"""The hub on a locked-down venue broker (``gg-arbiter broker-config``): it logs in as ``hub``."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from arbiter import wire
from arbiter.app.cli import main
from arbiter.app.commands.hub_common import broker_login
from arbiter.app.errors import HubCliError
from arbiter.hub.broker_link import Ingest
from arbiter.hub.errors import IngestError
from arbiter.hub.ledger import Ledger
from tests.support.contract import new_game
from tests.support.mqtt import Mosquitto, Subscriber
from tests.support.waiting import wait_until

pytestmark = pytest.mark.timeout(120)
EVENT = "demo"


@pytest.fixture
def venue(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    out = tmp_path / "venue"
    assert main(["broker-config", "--tables", "2", "--event", EVENT, "--out", str(out)]) == 0
    conf = (out / "mosquitto.conf").read_text().splitlines()
    kept = [ln for ln in conf if not ln.startswith(("listener", "persistence"))]
    broker = Mosquitto(tmp_path / "broker", extra="\n".join(kept)).start()
    try:
        yield broker.port, out
    finally:
        broker.stop()


def _args(broker: str, password_file: Path | None = None) -> argparse.Namespace:
    return argparse.Namespace(broker=broker,
                              password_file=str(password_file) if password_file else None)


def test_broker_login_from_url_and_password_file(tmp_path: Path) -> None:
    assert broker_login(_args("mqtt://127.0.0.1:1883")) == (None, None)
    assert broker_login(_args("mqtt://hub:s%40cret@127.0.0.1")) == ("hub", "s@cret")
    secret = tmp_path / "hub.password"
    secret.write_text("from-file\n")
    assert broker_login(_args("mqtt://hub@127.0.0.1", secret)) == ("hub", "from-file")
    with pytest.raises(HubCliError, match="needs a user"):
        broker_login(_args("mqtt://127.0.0.1", secret))
    with pytest.raises(HubCliError, match="cannot read"):
        broker_login(_args("mqtt://hub@127.0.0.1", tmp_path / "missing"))


def test_hub_logs_in_reads_tables_and_writes_assignments(
    venue: tuple[int, Path], tmp_path: Path
) -> None:
    port, out = venue
    secret = (out / "secrets" / "hub.password").read_text().strip()
    table_secret = (out / "secrets" / "table-1.password").read_text().strip()
    with Ledger(tmp_path / "hub.sqlite", EVENT) as ledger:
        refused = Ingest(ledger, EVENT, "127.0.0.1", port, client_id="anonymous-hub")
        with pytest.raises(IngestError):
            refused.start(timeout=3)  # allow_anonymous false: no account, no connection
        ingest = Ingest(ledger, EVENT, "127.0.0.1", port, username="hub", password=secret)
        ingest.start()
        try:
            # One connection for table 1 (client ids are logins: a second would replace it).
            table = Subscriber(port, f"gg/{EVENT}/table/1/assignment", username="table-1",
                               password=table_secret)
            try:
                event = new_game("1", 1, "1")
                table.client.publish(f"gg/{EVENT}/table/1/events", json.dumps(event),
                                     qos=1).wait_for_publish(5)
                wait_until(lambda: len(ledger.events.of_table("1")) == 1,
                           what="the event in the ledger")
                ingest.publish_assignment(
                    "1", wire.assignment_message(wire.assignment(1, 1, "Ana", "Ben"))
                )
                table.wait(lambda s: s.on("/assignment"), what="table 1 reads its assignment")
            finally:
                table.close()
        finally:
            ingest.stop()
