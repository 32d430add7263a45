"""The self-test with fake outputs and a fake sleep: what it checks and what it refuses."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from arbiter.device.errors import DeviceError
from arbiter.device.selftest import SelfTest
from arbiter.drivers.readers.base import SlotReading, SlotState
from arbiter.rules.contenders import Contenders
from arbiter.rules.pieces import Piece
from arbiter.rules.verdict import Role, Survivor
from arbiter.storage.journal import GameStore
from arbiter.tunes.rtttl import parse

TUNES = {
    "ready": parse("Ready:d=16,o=5,b=600:c,e,g"),
    "error": parse("Error:d=16,o=4,b=600:c,p,c"),
}


class Outputs:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def result(self, survivor: Survivor) -> None:
        self.calls.append(f"result:{survivor.value}")

    def waiting(self) -> None:
        self.calls.append("waiting")

    def clear(self) -> None:
        self.calls.append("clear")

    def play(self, name: str) -> None:
        self.calls.append(f"play:{name}")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[GameStore]:
    with GameStore(tmp_path / "data") as store:
        yield store


def test_selftest_lights_each_led_plays_each_tune_reports_each_slot() -> None:
    outputs, slept = Outputs(), list[float]()
    test = SelfTest(outputs, TUNES, sleep=slept.append)
    readings = {
        Role.ATTACKER: SlotReading(Role.ATTACKER, SlotState.EMPTY),
        Role.DEFENDER: SlotReading(Role.DEFENDER, SlotState.FAULT, detail="no port"),
    }
    lines = test.run(None, readings)
    assert outputs.calls == [
        "result:attacker", "result:defender", "waiting", "clear", "play:error", "play:ready",
    ]
    assert slept == [0.6, 0.6, 1.2]
    assert lines[-2:] == ["slot attacker: empty", "slot defender: fault (no port)"]
    assert any(line.startswith("tune ready: played") for line in lines)


def test_selftest_refuses_unknown_tune_and_a_game_in_progress(store: GameStore) -> None:
    test = SelfTest(Outputs(), TUNES, sleep=lambda s: None)
    with pytest.raises(DeviceError, match="no tune 'taps'"):
        test.check(store.current, ["taps"], force=False)
    test.check(store.current, None, force=False)  # a game not begun may be tested
    store.accept(Contenders.untagged(Piece.parse("W:COL"), Piece.parse("B:MAJ")))
    with pytest.raises(DeviceError, match="in progress"):
        test.check(store.current, None, force=False)
    test.check(store.current, None, force=True)
