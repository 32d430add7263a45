"""A table the broker takes but refuses (issue 19, finding 12): logged in with another
table's password, its events are refused by the ACL of ``broker-config``. Over MQTT 5 the
PUBACK says so (0x87 Not authorized): the table's status shows "refused" with the reason,
its log says why, its cursor stays before the refused event, and once the broker lets it
publish the events go out from there. Real Mosquitto, real broker-config ACL."""

from __future__ import annotations

import logging
import signal
from pathlib import Path

import pytest

from arbiter.fleet import link as link_module
from arbiter.fleet.outbox import CursorFile
from tests.fleet.conftest import GAME, TableFactory, secret
from tests.support.mqtt import Mosquitto, Subscriber, seqs
from tests.support.waiting import wait_until

pytestmark = pytest.mark.timeout(120)


def test_refused_table_shows_and_logs_it_and_keeps_its_cursor(
    locked: tuple[Mosquitto, Path], make_table: TableFactory,
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The retry, soon (it is not the subject here).
    monkeypatch.setattr(link_module, "REFUSED_RETRY", 0.5, raising=False)
    broker, out = locked
    hub = Subscriber(broker.port, "gg/demo/#", username="hub", password=secret(out, "hub"))
    # Table 1 set up with table 2's login (a copied file, a typo).
    wrong = out / "secrets" / "table-2.password"
    table = make_table(f"mqtt://table-2@127.0.0.1:{broker.port}", table="1",
                       extra=f'password_file = "{wrong}"\n')
    attacker, defender = GAME[0]
    table.rig.challenge(attacker, defender)
    table.rig.empty()

    def broker_part() -> dict[str, str]:
        return dict(table.arbiter.status()["broker"])

    wait_until(lambda: broker_part()["state"] == "refused", what="the table shows the refusal")
    assert "not authorized" in broker_part()["cause"].lower()
    assert any(r.levelno == logging.ERROR and "refused event 1" in r.getMessage()
               for r in caplog.records)
    assert not hub.on("table/1/events")
    assert table.link is not None
    table.link.close()  # saves the cursor where it is
    assert CursorFile(table.arbiter.data_dir).load().seq == 0  # not past the refused event
    hub.close()


def test_refused_then_allowed_publishes_from_the_refused_event(
    tmp_path: Path, locked: tuple[Mosquitto, Path], make_table: TableFactory,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(link_module, "REFUSED_RETRY", 0.5, raising=False)
    broker, out = locked
    hub = Subscriber(broker.port, "gg/demo/#", username="hub", password=secret(out, "hub"))
    wrong = out / "secrets" / "table-2.password"
    table = make_table(f"mqtt://table-2@127.0.0.1:{broker.port}", table="1",
                       extra=f'password_file = "{wrong}"\n')
    for attacker, defender in GAME[:2]:
        table.rig.challenge(attacker, defender)
        table.rig.empty()
    wait_until(lambda: table.arbiter.status()["broker"]["state"] == "refused",
               what="refused")
    # The organiser lets table-2's login write table 1's topics and reloads the broker.
    acl = out / "acl"
    acl.write_text(acl.read_text().replace("topic write gg/demo/table/2/events",
                                           "topic write gg/demo/table/2/events\n"
                                           "topic write gg/demo/table/1/#"))
    assert broker.proc is not None
    broker.proc.send_signal(signal.SIGHUP)
    hub.wait(lambda s: len(s.events()) >= 3, what="the events once allowed")
    assert seqs(hub.events()) == [1, 2, 3]  # from the first refused one, none skipped
    wait_until(lambda: table.arbiter.status()["broker"]["state"] == "connected",
               what="the table says connected again")
    hub.close()
