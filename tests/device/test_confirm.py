"""The NEW GAME button's question (arbiter/device/confirm.py) on a fake clock: a first hold
asks, a second within the documented window confirms, anything else changes nothing."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arbiter.app.assembly import build_arbiter
from arbiter.app.config import load_config
from arbiter.device.arbiter import DeviceState
from arbiter.device.confirm import CONFIRM_SECONDS, Hold, NewGameConfirmation
from arbiter.drivers.outputs import CONFIRM_BLINK
from arbiter.rules.errors import RecordSealedError
from arbiter.rules.game import EndingKind
from arbiter.storage.journal import read_game
from tests.support.clock import FakeClock
from tests.support.rig import Rig, write_config
from tests.support.waiting import wait_until


def test_confirm_second_hold_within_the_window_confirms() -> None:
    clock = FakeClock()
    question = NewGameConfirmation(clock)
    assert question.hold() is Hold.ASKED
    clock.advance(CONFIRM_SECONDS)  # the last instant still counts
    assert question.hold() is Hold.CONFIRMED
    assert not question.asking
    assert question.hold() is Hold.ASKED  # the next hold asks afresh


def test_confirm_second_hold_after_the_window_only_asks_again() -> None:
    clock = FakeClock()
    question = NewGameConfirmation(clock)
    question.hold()
    clock.advance(CONFIRM_SECONDS + 0.01)
    assert not question.asking
    assert question.hold() is Hold.ASKED  # a late second hold is a first hold
    assert question.hold() is Hold.CONFIRMED


def test_confirm_withdrawn_question_needs_two_holds_again() -> None:
    question = NewGameConfirmation(FakeClock())
    assert question.withdraw() is False  # nothing asked: nothing to take back
    question.hold()
    assert question.withdraw() is True
    assert question.hold() is Hold.ASKED


def test_confirm_run_out_only_after_the_window() -> None:
    clock = FakeClock()
    question = NewGameConfirmation(clock, window=5.0)
    assert question.run_out() is False
    question.hold()
    clock.advance(5.0)
    assert question.run_out() is False and question.asking
    clock.advance(0.01)
    assert question.run_out() is True
    assert question.run_out() is False  # told once


def test_confirm_window_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        NewGameConfirmation(FakeClock(), window=0)


# -- on the device: MockFactory button presses, the window on a clock the test moves ------


class JumpClock:
    """Real monotonic time (the key readers debounce on it) that the test can move on at
    once: the confirmation window runs out without waiting ten seconds."""

    def __init__(self) -> None:
        self._jumped = 0.0

    def __call__(self) -> float:
        return time.monotonic() + self._jumped

    def jump(self, seconds: float) -> None:
        self._jumped += seconds


@pytest.fixture
def clock() -> JumpClock:
    return JumpClock()


@pytest.fixture
def rig(tmp_path: Path, mock_factory: Any, clock: JumpClock) -> Iterator[Rig]:
    """A keys-gpio arbiter whose button is held for half a second (the least allowed)."""
    path = write_config(tmp_path, "[button]\nnew_game_pin = 10\nhold_seconds = 0.5\n")
    config = load_config(path, data_dir=tmp_path / "data")
    rig = Rig(build_arbiter(config, pin_factory=mock_factory, clock=clock), mock_factory).start()
    try:
        yield rig
    finally:
        rig.arbiter.close()


def _leds(rig: Rig) -> dict[str, Any]:
    return dict(rig.arbiter.outputs()["leds"])


PROMPT = {name: {"mode": "blink", "blink": CONFIRM_BLINK.to_dict()}
          for name in ("attacker", "defender", "status")}


@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
def test_confirm_prompt_is_the_same_in_every_state(rig: Rig) -> None:
    """Fresh game, a verdict showing (attacker, defender, split), a game over: the one
    prompt, the one tune, and nothing recorded."""
    seen: list[tuple[dict[str, Any], str]] = []

    def prompt_here() -> None:
        rig.hold_new_game()
        seen.append((_leds(rig), rig.arbiter.outputs()["played"][-1]["name"]))

    prompt_here()  # a fresh game, idle
    for attacker, defender in (("W:5*G", "B:4*G"), ("W:PVT", "B:SGT"), ("W:COL", "B:COL")):
        rig.challenge(attacker, defender)  # attacker, defender, split showing
        prompt_here()
        rig.empty()
    rig.challenge("W:PVT", "B:FLG")  # game over
    prompt_here()
    assert seen == [(PROMPT, "confirm")] * 5
    status = rig.arbiter.status()
    assert (status["game_id"], status["challenge_count"]) == (1, 4)  # nothing changed


@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
def test_confirm_second_hold_abandons_and_keeps_ranks_secret(rig: Rig) -> None:
    rig.challenge("W:SPY", "B:5*G")
    rig.empty()
    rig.hold_new_game()
    assert rig.arbiter.status()["game_id"] == 1  # one hold changed nothing
    rig.hold_new_game()
    assert rig.arbiter.status()["game_id"] == 2
    game = read_game(rig.config.data_dir, 1)
    assert game.ending is not None and game.ending.kind is EndingKind.ABANDONED
    assert game.sealed and rig.arbiter.sealed_games == (1,)
    with pytest.raises(RecordSealedError):
        game.full_record()
    wait_until(lambda: rig.arbiter.state is DeviceState.IDLE)
    rig.challenge("B:COL", "W:MAJ")  # the next game has begun
    assert not read_game(rig.config.data_dir, 1).sealed
    assert not rig.arbiter.sealed_games


@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
def test_confirm_a_piece_seated_withdraws_the_question(rig: Rig) -> None:
    rig.challenge("W:SPY", "B:5*G")
    shown = _leds(rig)
    rig.hold_new_game()
    assert _leds(rig) == PROMPT
    rig.empty()  # the players play on
    wait_until(lambda: _leds(rig) != PROMPT, what="the prompt withdrawn")
    rig.hold_new_game()  # a first hold again: it only asks
    assert rig.arbiter.status()["game_id"] == 1
    assert rig.prompts() == 2
    assert shown["attacker"]["mode"] == "on"  # the verdict showed before the prompt


@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
def test_confirm_window_runs_out(rig: Rig, clock: JumpClock) -> None:
    rig.challenge("W:SPY", "B:5*G")
    shown = _leds(rig)
    rig.hold_new_game()
    clock.jump(CONFIRM_SECONDS + 1)
    # The worker's idle turn (every couple of seconds) withdraws it: the verdict is back.
    wait_until(lambda: _leds(rig) == shown, what="the verdict shown again")
    rig.hold_new_game()  # too late to confirm: this one asks again
    assert rig.arbiter.status()["game_id"] == 1 and rig.prompts() == 2
    rig.hold_new_game()
    assert rig.arbiter.status()["game_id"] == 2
