"""Every log line bounded, no 500 on any string (issue 27, item 8): text with half a
UTF-16 pair (a lone surrogate, only a JSON ``\\u`` escape or a command line's bytes can
make one) is a clear refusal wherever it comes from, and a flood of it writes a few lines."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import MQTTErrorCode

from arbiter import logthrottle, wire
from arbiter.app.cli import main
from arbiter.hub.broker_link import Ingest
from arbiter.hub.errors import LoneSurrogateError
from arbiter.hub.ledger import Ledger
from arbiter.tournament.errors import PlayerNameError
from arbiter.wire.errors import WireFormatError
from tests.support.clock import FakeClock

EVENT = "club"
#: A status whose message is half a character: 5,000 of them once wrote 5,005 ERROR lines.
HALF = b'{"format": 1, "table": "T1", "state": "idle", "message": "x\\ud800"}'


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    with Ledger(tmp_path / "hub.sqlite", EVENT) as led:
        yield led


@pytest.mark.parametrize("raw", [
    HALF, b'{"a": "\\udfff"}', b'{"\\ud800": 1}', b'["\\ud83d"]', b'{"a": "\\uDC00x"}'])
def test_wire_refuses_a_lone_surrogate(raw: bytes) -> None:
    with pytest.raises(WireFormatError, match="lone surrogate"):
        wire.loads(raw)


def test_wire_takes_a_whole_pair() -> None:
    assert wire.loads(b'{"a": "\\ud83d\\ude00"}') == {"a": "\N{GRINNING FACE}"}


def test_ingest_a_flood_of_half_characters_writes_a_few_lines(
    ledger: Ledger, caplog: pytest.LogCaptureFixture
) -> None:
    ingest = Ingest(ledger, EVENT, "127.0.0.1", 1)
    acked: list[int] = []

    def ack(mid: int, _qos: int) -> MQTTErrorCode:
        acked.append(mid)
        return MQTTErrorCode.MQTT_ERR_SUCCESS

    ingest.client.ack = ack  # type: ignore[method-assign, assignment]
    batch = []
    for mid in range(1, 5_001):
        msg = mqtt.MQTTMessage(mid, wire.topic(EVENT, "T1", wire.Topic.STATUS).encode())
        msg.payload, msg.qos = HALF, 1
        batch.append((ingest.client, msg))
    with caplog.at_level(logging.INFO):
        for start in range(0, len(batch), 500):
            ingest.writer.take_batch(batch[start:start + 500])
    assert len(acked) == 5_000  # refused for good: never sent again
    assert ledger.events.refused() == {"T1": 5_000}
    # The first ten, then one in a thousand: 15 lines, never one per message.
    assert len(caplog.records) == logthrottle.FIRST + 5_000 // logthrottle.EVERY
    assert all(r.levelno == logging.WARNING for r in caplog.records)


def test_ledger_refuses_half_characters_whatever_the_way_in(ledger: Ledger) -> None:
    # A name meets the one rule of names first (names.py), which says what it holds.
    with pytest.raises(PlayerNameError, match=r"U\+DC80 \(a lone surrogate"):
        ledger.admin.add_player("Ana\udc80")  # a command line's undecodable byte
    assert ledger.admin.players() == []
    ledger.admin.add_player("Ana")
    ledger.admin.add_player("Ben")
    ledger.admin.pair_round("round-robin")
    with pytest.raises(LoneSurrogateError):
        ledger.admin.assign_table(1, 1, "T\ud800", "org")
    with pytest.raises(LoneSurrogateError):
        ledger.admin.pairings(1, tables=["T\ud800"])


def test_hub_cli_names_a_half_character_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["hub", "--event", EVENT, "--data", str(tmp_path), "players", "add",
                 "Ana\udced"]) == 2
    err = capsys.readouterr().err
    assert "lone surrogate" in err and "Traceback" not in err


def test_throttle_caps_lines_a_minute_over_every_key() -> None:
    clock = FakeClock()
    throttle = logthrottle.LogThrottle(clock=clock)
    lines = [throttle.note(f"10.0.{i // 250}.{i % 250}") for i in range(1_000)]
    assert sum(line is not None for line in lines) == logthrottle.PER_MINUTE
    clock.advance(60)
    line = throttle.note("10.9.9.9")
    assert line == (1, 1_000 - logthrottle.PER_MINUTE)  # says how many it held back
