"""Records the hub accepts are bounded per table (issue 27, item 5): 3,000 valid 60 KB
records for unknown games grew the ledger by 178 MB."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import MQTTErrorCode

from arbiter import logthrottle, wire
from arbiter.hub import tables as table_state
from arbiter.hub.broker_link import Ingest
from arbiter.hub.errors import RecordRefusedError
from arbiter.hub.ledger import Ledger
from tests.support.contract import new_game

EVENT = "club-night"
PAD = 60_000  # the red team's records: valid, about 60 KB each


def _record(table: str, game: str, pad: int = PAD) -> bytes:
    return json.dumps({"format": 1, "table": table, "game": game,
                       "record": {"challenges": [], "note": "x" * pad}}).encode()


def _ledger_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def test_a_flood_of_records_for_unknown_games_grows_the_ledger_a_little(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with Ledger(tmp_path / "hub.sqlite", EVENT) as ledger:
        ingest = Ingest(ledger, EVENT, "127.0.0.1", 1)
        acked: list[int] = []

        def ack(mid: int, _qos: int) -> MQTTErrorCode:
            acked.append(mid)
            return MQTTErrorCode.MQTT_ERR_SUCCESS

        ingest.client.ack = ack  # type: ignore[method-assign, assignment]
        before = _ledger_bytes(ledger.path)
        count = 1_000
        with caplog.at_level(logging.INFO):
            for start in range(0, count, 100):
                batch = []
                for n in range(start + 1, start + 101):
                    msg = mqtt.MQTTMessage(
                        n, wire.topic(EVENT, "7", wire.Topic.RECORD).encode())
                    msg.payload, msg.qos = _record("7", str(n)), 1
                    batch.append((ingest.client, msg))
                ingest.writer.take_batch(batch)
        grown = _ledger_bytes(ledger.path) - before
        kept = table_state.UNKNOWN_GAME_RECORDS
        assert len(acked) == count  # refused for good: never sent again
        assert [g for g in map(str, range(1, count + 1))
                if ledger.tables.record("7", g) is not None] == [str(n) for n in
                                                                 range(1, kept + 1)]
        assert ledger.events.refused() == {"7": count - kept}
        # The kept records and the refusals' notes, not 60 MB.
        assert grown < kept * PAD * 3, grown
        # The one throttle: a table's first refusals, then one in many.
        lines = [r for r in caplog.records if "record/" in r.getMessage()]
        assert len(lines) <= logthrottle.FIRST + count // logthrottle.EVERY + 1


def test_records_of_known_games_are_bounded_in_number_and_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(table_state, "RECORDS_PER_TABLE", 5)
    monkeypatch.setattr(table_state, "RECORD_BYTES_PER_TABLE", 2 * 1000 + 600)
    with Ledger(tmp_path / "hub.sqlite", EVENT) as ledger:
        for n in range(1, 9):
            ledger.events.record("T1", new_game("T1", n, f"g{n}"))
            ledger.events.record("T2", new_game("T2", n, f"g{n}"))

        def keep(table: str, game: str, pad: int) -> bool:
            try:
                ledger.tables.set_record(table, game, {"challenges": [], "p": "x" * pad})
            except RecordRefusedError:
                return False
            return True

        # By number: five records of a table, a sixth refused; another table unaffected.
        assert [keep("T1", f"g{n}", 10) for n in range(1, 7)] == [True] * 5 + [False]
        assert keep("T2", "g1", 10)
        # Replacing a record held is no new one.
        assert keep("T1", "g1", 20)
        # By bytes: beside g1's few, two of about 1,000 bytes fit T2's 2,600, a third not.
        assert [keep("T2", f"g{n}", 1000) for n in range(2, 5)] == [True, True, False]
        # ... nor may a record held grow past it.
        assert not keep("T2", "g2", 2000)
        assert ledger.tables.record("T1", "g6") is None
        assert ledger.events.refused() == {"T1": 1, "T2": 2}
