"""No table can wedge the hub (issue 19, red team 1 and 6), against a real Mosquitto.

One table floods the hub with poison pills, more than the broker's window of 20
unacknowledged messages: integers of 2**63 and more (``seq``, ``number``,
``eliminated``, an assignment's round and board), absurd times, a forged ``state``, an
oversized status, and a retained ``resend`` with an id of 10**30. Each is refused alone,
noted as a rejection and acknowledged; another table's honest game still arrives and is
scored, and so does what it sends after them.
The payloads are written out as JSON here, as an attacker would, not built by the
format's own code.
"""

from __future__ import annotations

import json
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
from tests.support.waiting import wait_until

EVENT = "open-2026"
HUGE = 2**63
AT = 1795464000.0


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    with Ledger(tmp_path / "hub.sqlite", EVENT) as led:
        led.admin.add_players([Player("Ana"), Player("Ben"), Player("Cid"), Player("Dee")])
        led.admin.pair_round("round-robin")
        led.admin.assign_table(1, 1, "T1", who="org")
        led.admin.assign_table(1, 2, "T2", who="org")
        yield led


class Client:
    """A table's login (anonymous broker): publishes whatever it is given, QoS 1."""

    def __init__(self, port: int, name: str) -> None:
        self.prefix = f"gg/{EVENT}/table/{name}/"
        self.name = name
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"poison-{name}")
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()

    def publish(self, suffix: str, payload: bytes | dict[str, Any], retain: bool = False) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.client.publish(self.prefix + suffix, data, qos=1, retain=retain).wait_for_publish(10)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def _head(table: str, seq: int, game: str, kind: str) -> dict[str, Any]:
    return {"format": 1, "table": table, "seq": seq, "game": game, "type": kind}


def _honest_game(table: str, ledger: Ledger) -> list[dict[str, Any]]:
    """The game of the board assigned to ``table``, White winning."""
    row = next(r for r in ledger.admin.pairings(1) if r.table == table)
    p = row.pairing
    return [
        {**_head(table, 1, "g1", "new_game"), "at": AT,
         "assignment": {"round": 1, "board": p.board, "white": p.white, "black": p.black,
                        "pairing": row.pairing_id}},
        {**_head(table, 2, "g1", "challenge"), "number": 1, "attacker_side": "W",
         "result": "attacker", "eliminated": {"W": 0, "B": 1}, "at": AT},
        {**_head(table, 3, "g1", "game_over"),
         "ending": {"kind": "flag_captured", "winner": "W", "at": AT}},
    ]


def _pills(table: str) -> list[dict[str, Any]]:
    """Events that each raised OverflowError (or worse) in the ledger before the fix."""
    challenge = {"number": 1, "attacker_side": "W", "result": "attacker",
                 "eliminated": {"W": 0, "B": 1}, "at": AT}
    names: dict[str, Any] = {"round": 1, "board": 1, "white": "Ana", "black": "Ben"}
    new: dict[str, Any] = {"at": AT, "assignment": names}
    pills = []
    for n in range(25):  # more than Mosquitto's 20 in flight to the hub
        seq = 100 + n
        pill: dict[str, Any] = [
            {**_head(table, HUGE + n, "g9", "challenge"), **challenge},
            {**_head(table, seq, "g9", "challenge"), **challenge, "number": HUGE},
            {**_head(table, seq, "g9", "challenge"), **challenge,
             "eliminated": {"W": HUGE, "B": 0}},
            {**_head(table, seq, "g9", "new_game"), **new,
             "assignment": {**names, "round": HUGE}},
            {**_head(table, seq, "g9", "new_game"), **new,
             "assignment": {**names, "board": HUGE}},
        ][n % 5]
        pills.append(pill)
    return pills


def test_ingest_poison_pills_are_refused_alone_and_never_wedge_the_hub(
    broker: int, ledger: Ledger
) -> None:
    hub = Ingest(ledger, EVENT, "127.0.0.1", broker)
    hub.start()
    bad, good = Client(broker, "T1"), Client(broker, "T2")
    try:
        for pill in _pills("T1"):
            bad.publish("events", pill)
        for event in _honest_game("T2", ledger):
            good.publish("events", event)
        wait_until(lambda: ledger.events.last_seq("T2") == 3, what="the honest table's game")
        assert ledger.admin.pairings(1)[1].result is Result.WHITE_WIN
        wait_until(lambda: len(ledger.events.rejections()) == 25, what="every pill refused")
        assert ledger.events.of_table("T1") == []
        assert {t for _at, t, _seq, _why in ledger.events.rejections()} == {"T1"}
        assert ledger.archive.verify() == []
        # Acknowledged: with 25 pills unacknowledged, Mosquitto's window of 20 messages in
        # flight to the hub would be full, and nothing more would reach it.
        good.publish("events", {**_head("T2", 4, "g2", "new_game"), "at": AT,
                                "assignment": None})
        wait_until(lambda: ledger.events.last_seq("T2") == 4, what="the next honest event")
    finally:
        hub.stop()
        bad.close()
        good.close()


def test_ingest_a_retained_resend_of_a_huge_id_is_refused(
    broker: int, ledger: Ledger
) -> None:
    anyone = Client(broker, "T1")  # an anonymous broker: anyone may write the hub's topic
    good = Client(broker, "T2")
    anyone.publish("resend", {"format": 1, "table": "T1", "id": 10**30, "ranges": [[1, 2]]},
                   retain=True)
    hub = Ingest(ledger, EVENT, "127.0.0.1", broker)
    hub.start()
    try:
        for event in _honest_game("T2", ledger):
            good.publish("events", event)
        wait_until(lambda: ledger.events.last_seq("T2") == 3, what="the honest table's game")
        wait_until(lambda: len(ledger.events.rejections()) == 1, what="the resend refused")
        # The next request the hub asks of T1 has a random id of its own, within bounds.
        assert 1 <= ledger.events.ask_resend("T1", [(1, 1)]).id <= wire.MAX_INT
    finally:
        hub.stop()
        anyone.publish("resend", b"", retain=True)
        anyone.close()
        good.close()


def test_ingest_a_forged_or_oversized_status_is_refused(broker: int, ledger: Ledger) -> None:
    hub = Ingest(ledger, EVENT, "127.0.0.1", broker)
    hub.start()
    bad, good = Client(broker, "T1"), Client(broker, "T2")
    try:
        bad.publish("status", {"format": 1, "table": "T1", "state": "W:SPY took B:5*G"},
                    retain=True)
        bad.publish("status", {"format": 1, "table": "T1", "state": "idle",
                               "message": "x" * 8_000_000}, retain=True)
        bad.publish("record/g1", {"format": 1, "table": "T1", "game": "g1",
                                  "record": {"started_at": 1e300}}, retain=True)
        good.publish("status", {"format": 1, "table": "T2", "state": "idle"}, retain=True)
        wait_until(lambda: ledger.tables.state("T2")[1] is not None, what="the honest status")
        wait_until(lambda: len(ledger.events.rejections()) == 3, what="three refusals")
        assert ledger.tables.state("T1")[1] is None
        assert ledger.tables.record("T1", "g1") is None
    finally:
        hub.stop()
        bad.close()
        good.close()
