"""The device end to end: notched keys on mock pins -> verdict LEDs, tunes and record.

Expected verdicts come from RULES.md as restated in tests/support/oracle.py.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arbiter.app.assembly import build_arbiter
from arbiter.app.config import load_config
from arbiter.device.arbiter import Arbiter, DeviceState
from arbiter.drivers.readers.base import SlotState
from arbiter.rules.errors import EndingError
from arbiter.rules.game import EndingKind
from arbiter.rules.keycode import DEFAULT_KEYCODE
from arbiter.rules.pieces import Piece, all_pieces
from arbiter.rules.ranks import Rank, Side
from arbiter.rules.verdict import Role
from arbiter.storage.journal import read_game
from tests.support.buzzer import record_frequencies
from tests.support.clock import FakeClock
from tests.support.oracle import oracle
from tests.support.rig import Rig, write_config
from tests.support.waiting import WAIT, wait_until

TAPS_GROUPS = [
    "G4",
    "G4",
    "C5",
    "G4",
    "C5",
    "E5",
    "G4",
    "C5",
    "E5",
    "G4",
    "C5",
    "E5",
    "G4",
    "C5",
    "E5",
    "C5",
    "E5",
    "G5",
    "E5",
    "C5",
    "G4",
    "G4",
    "G4",
    "C5",
]
HZ = {"G4": 392.00, "C5": 523.25, "E5": 659.26, "G5": 783.99}


CASES = [
    ("W:SPY", "B:5*G"),
    ("B:5*G", "W:SPY"),
    ("W:PVT", "B:SPY"),
    ("B:SGT", "W:PVT"),
    ("W:COL", "B:COL"),
    ("B:2LT", "W:1LT"),
]


@pytest.mark.parametrize(("attacker", "defender"), CASES)
def test_device_verdict_lights_survivor(rig: Rig, attacker: str, defender: str) -> None:
    expected, _ = oracle(Piece.parse(attacker).rank.code, Piece.parse(defender).rank.code)
    status = rig.challenge(attacker, defender)
    assert status["last_verdict"] == {"none": "split"}.get(expected, expected)
    outputs = rig.arbiter.outputs()["leds"]
    if expected == "attacker":
        wait_until(lambda: rig.lit("attacker") and not rig.lit("defender"))
        assert outputs["attacker"]["mode"] == "on" and outputs["defender"]["mode"] == "off"
    elif expected == "defender":
        wait_until(lambda: rig.lit("defender") and not rig.lit("attacker"))
    else:  # a split blinks both, unlike any single winner
        assert outputs["attacker"]["mode"] == "blink" and outputs["defender"]["mode"] == "blink"
    # already durable: another reader of the data directory sees it
    game = read_game(rig.arbiter.config.data_dir, status["game_id"])
    assert (str(game.challenges[-1].attacker), str(game.challenges[-1].defender)) == (
        attacker,
        defender,
    )


def test_device_pieces_left_seated_count_once(rig: Rig) -> None:
    rig.challenge("W:COL", "B:MAJ")
    rig.settle()  # every reading so far handled: still one challenge
    assert rig.count() == 1
    rig.seat(Role.DEFENDER, "B:CPT")  # swap one piece: not a new challenge yet
    cpt = DEFAULT_KEYCODE.codeword(Piece.parse("B:CPT"))
    rig.wait_reading(Role.DEFENDER, SlotState.PRESENT, cpt)
    rig.settle()  # the swap's reading handled, long past the debounce window
    assert rig.count() == 1
    rig.empty()
    wait_until(lambda: rig.arbiter.state is DeviceState.IDLE)
    wait_until(lambda: not rig.lit("attacker") and not rig.lit("defender"))
    rig.challenge("W:COL", "B:CPT")
    assert rig.count() == 2


@pytest.mark.parametrize(
    ("attacker", "defender", "reason"),
    [("W:COL", "W:MAJ", "same side"), ("B:SPY", "B:SPY", "same side")],
)
def test_device_refuses_and_records_nothing(
    rig: Rig, attacker: str, defender: str, reason: str
) -> None:
    rig.seat(Role.ATTACKER, attacker)
    rig.seat(Role.DEFENDER, defender)
    wait_until(lambda: reason in rig.arbiter.status()["message"])
    assert rig.count() == 0
    played = [t["name"] for t in rig.arbiter.outputs()["played"]]
    wait_until(
        lambda: "error" in [t["name"] for t in rig.arbiter.outputs()["played"]],
        what=f"the error tune (played so far: {played})",
    )
    # fixing the pair (swap the defender) makes it a challenge
    rig.seat(Role.DEFENDER, "B:LTC" if attacker.startswith("W") else "W:LTC")
    wait_until(lambda: rig.count() == 1)


def test_device_unused_codeword_is_unknown_piece(rig: Rig) -> None:
    unused = DEFAULT_KEYCODE.unused()[0]
    rig.seat(Role.ATTACKER, "W:COL")
    rig.press(Role.DEFENDER, unused)
    wait_until(lambda: "not known" in rig.arbiter.status()["message"])
    assert rig.count() == 0


def test_device_half_seated_key_is_error_not_piece(rig: Rig) -> None:
    word = DEFAULT_KEYCODE.codeword(Piece.parse("B:5*G"))
    half = word.replace("1", "0", 1)  # one switch not pressed: weight 2
    rig.seat(Role.ATTACKER, "W:SPY")
    rig.press(Role.DEFENDER, half)
    wait_until(lambda: rig.arbiter.status()["slots"]["defender"] == "invalid")
    assert "not fully seated" in rig.arbiter.status()["message"]
    assert rig.count() == 0
    rig.press(Role.DEFENDER, word)  # pushed home: now it counts
    wait_until(lambda: rig.count() == 1)
    assert rig.arbiter.status()["last_verdict"] == "attacker"


def test_device_eliminated_piece_refused(rig: Rig) -> None:
    rig.challenge("B:SPY", "W:5*G")
    rig.empty()
    wait_until(lambda: rig.arbiter.state is DeviceState.IDLE)
    rig.seat(Role.ATTACKER, "W:5*G")
    rig.seat(Role.DEFENDER, "B:MAJ")
    wait_until(lambda: "already eliminated" in rig.arbiter.status()["message"])
    assert rig.count() == 1


def _pitch(hz: float) -> str:
    names = [name for name, f in HZ.items() if abs(f - hz) < 1.0]
    assert len(names) == 1, hz
    return names[0]


@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
def test_device_fallen_flag_plays_taps_and_ends_game(rig: Rig) -> None:
    log = record_frequencies(rig.factory, rig.config.signals.buzzer_pin)
    status = rig.challenge("W:PVT", "B:FLG")
    assert status["ending"]["kind"] == "flag_captured"
    assert status["ending"]["winner"] == "W"
    wait_until(lambda: rig.arbiter.state is DeviceState.GAME_OVER)
    rig.arbiter.settle()  # Taps plays on after game over shows: wait for its end
    sounded = [_pitch(hz) for hz in log if hz is not None]
    assert sounded[-len(TAPS_GROUPS) :] == TAPS_GROUPS
    # a challenge after the game ended is refused
    rig.empty()
    rig.seat(Role.ATTACKER, "W:COL")
    rig.seat(Role.DEFENDER, "B:MAJ")
    wait_until(lambda: "game is over" in rig.arbiter.status()["message"])
    assert rig.count() == 1
    assert rig.arbiter.state is DeviceState.GAME_OVER


def test_device_game_over_shows_at_once_and_answers_while_taps_plays(rig: Rig) -> None:
    """Issue 8, item 10: a fallen Flag no longer holds the device for Taps's length."""
    seen: list[tuple[str, str | None]] = []
    rig.challenge("W:PVT", "B:FLG")
    wait_until(lambda: rig.arbiter.outputs()["playing"] is not None)
    status = rig.arbiter.status()
    assert status["state"] == "game_over"
    assert status["ending"]["kind"] == "flag_captured"

    def look() -> None:  # runs on the worker: what plays when the device answers
        playing = rig.arbiter.outputs()["playing"]
        seen.append((rig.arbiter.state.value, playing["name"] if playing else None))

    rig.arbiter._call(look)
    assert seen == [("game_over", "taps")]
    # A new game cuts Taps short and starts at once.
    assert rig.arbiter.new_game() == 2
    assert rig.arbiter.outputs()["playing"] is None  # the ready tune played, Taps is cut
    assert rig.arbiter.outputs()["played"][-2]["name"] == "taps"
    rig.empty()
    wait_until(lambda: rig.arbiter.state is DeviceState.IDLE)


@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
def test_device_new_game_button_held_twice(rig: Rig) -> None:
    rig.challenge("W:PVT", "B:FLG")
    rig.empty()
    pin = rig.factory.pin(rig.config.button.new_game_pin)
    pin.drive_low()  # a short press is not enough
    pin.drive_high()
    rig.settle()
    assert (rig.arbiter.status()["game_id"], rig.prompts()) == (1, 0)
    rig.hold_new_game()  # the first hold only asks
    assert (rig.arbiter.status()["game_id"], rig.prompts()) == (1, 1)
    rig.hold_new_game()  # the second confirms: a new game
    assert rig.arbiter.status()["game_id"] == 2
    wait_until(lambda: rig.arbiter.state is DeviceState.IDLE)
    rig.challenge("B:COL", "W:MAJ")
    assert rig.arbiter.status()["challenge_count"] == 1
    assert rig.arbiter.status()["game_id"] == 2  # the short press never made a game


def test_device_declared_ending(rig: Rig) -> None:
    rig.challenge("W:COL", "B:MAJ")
    rig.arbiter.declare_end(EndingKind.RESIGNATION, Side.BLACK)
    status = rig.arbiter.status()
    assert status["state"] == "game_over"
    assert status["ending"]["kind"] == "resignation" and status["ending"]["winner"] == "B"
    with pytest.raises(EndingError):
        rig.arbiter.declare_end(EndingKind.DRAW, None)


def test_device_status_never_names_a_rank(rig: Rig) -> None:
    seen: list[str] = []
    q = rig.arbiter.subscribe()
    for attacker, defender in [("W:SPY", "B:5*G"), ("B:PVT", "W:SPY"), ("W:COL", "B:COL")]:
        rig.challenge(attacker, defender)
        rig.empty()
        wait_until(lambda: rig.arbiter.state is DeviceState.IDLE)
    rig.seat(Role.ATTACKER, "W:MAJ")
    rig.seat(Role.DEFENDER, "W:CPT")  # refused: its message must not name ranks either
    wait_until(lambda: rig.arbiter.status()["message"] != "")
    while not q.empty():
        seen.append(json.dumps(q.get_nowait()))
    seen.append(json.dumps(rig.arbiter.status()))
    text = "\n".join(seen)
    for piece in all_pieces():
        assert piece.rank.code not in text, piece
        assert piece.rank.full_name not in text, piece


def test_device_info_logs_never_name_a_rank(rig: Rig, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO")
    rig.challenge("W:SPY", "B:5*G")
    rig.empty()
    rig.seat(Role.ATTACKER, "W:SPY")
    rig.seat(Role.DEFENDER, "W:2LT")
    wait_until(lambda: rig.arbiter.status()["message"] != "")
    text = "\n".join(r.getMessage() for r in caplog.records if r.levelname != "DEBUG")
    assert "challenge 1" in text
    for piece in all_pieces():
        assert piece.rank.code not in text and piece.rank.full_name not in text


@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
def test_device_piece_pulled_while_deciding_records_nothing(
    tmp_path: Path, mock_factory: Any
) -> None:
    path = write_config(tmp_path, battle=True)
    text = path.read_text().replace("b=600:g4,c,e,4g.,e,2g", "b=120:g4,c,e,4g.,e,2g")
    path.write_text(text)  # a 2.6 s battle phrase: time to pull a piece
    config = load_config(path, data_dir=tmp_path / "data")
    arbiter = build_arbiter(config, pin_factory=mock_factory)
    rig = Rig(arbiter, mock_factory).start()
    try:
        rig.seat(Role.ATTACKER, "W:COL")
        rig.seat(Role.DEFENDER, "B:MAJ")
        wait_until(lambda: arbiter.state is DeviceState.DECIDING)
        rig.empty(Role.DEFENDER)
        wait_until(lambda: "moved while deciding" in arbiter.status()["message"])
        assert arbiter.status()["challenge_count"] == 0
        assert read_game(config.data_dir, 1).challenges == []
        # both slots emptied: the next pair is judged as usual
        rig.empty()
        rig.seat(Role.ATTACKER, "W:PVT")
        rig.seat(Role.DEFENDER, "B:PVT")
        wait_until(lambda: arbiter.status()["challenge_count"] == 1, timeout=15)
        assert arbiter.status()["last_verdict"] == "split"
    finally:
        arbiter.close()


def test_device_close_turns_outputs_off(tmp_path: Path, mock_factory: Any) -> None:
    config = load_config(write_config(tmp_path), data_dir=tmp_path / "data")
    arbiter = build_arbiter(config, pin_factory=mock_factory)
    rig = Rig(arbiter, mock_factory).start()
    rig.challenge("W:COL", "B:MAJ")
    arbiter.close()
    assert not mock_factory.pin(config.signals.attacker_led).state
    assert not mock_factory.pin(config.signals.status_led).state
    arbiter.close()  # twice is fine


def _played_then_restarted(tmp_path: Path, factory: Any, attacker: str, defender: str) -> Arbiter:
    """Play one challenge, shut down, and build the device again on the same data."""
    config = load_config(write_config(tmp_path), data_dir=tmp_path / "data")
    arbiter = build_arbiter(config, pin_factory=factory)
    Rig(arbiter, factory).start().challenge(attacker, defender)
    arbiter.close()
    factory.reset()
    return build_arbiter(config, pin_factory=factory)


def test_device_resumes_game_after_restart(tmp_path: Path, mock_factory: Any) -> None:
    arbiter = _played_then_restarted(tmp_path, mock_factory, "W:COL", "B:MAJ")
    arbiter.start()
    try:
        status = arbiter.status()
        assert (status["game_id"], status["challenge_count"]) == (1, 1)
        assert status["eliminated"] == {"W": 0, "B": 1}
    finally:
        arbiter.close()


def _bouncy_press(
    rig: Rig, clock: FakeClock, role: Role, word: str, noise: list[tuple[int, int]]
) -> None:
    """Press ``word`` after a burst of partial and bouncing contacts (2 ms each on the
    readers' clock, well under the debounce window), the way a key sliding home
    rattles its switches."""
    pressed = [i for i, bit in enumerate(word) if bit == "1"]
    for subset_mask, flips in noise:
        partial = ["0"] * 7
        for k, i in enumerate(pressed):
            if subset_mask >> k & 1:
                partial[i] = "1"
        if flips:  # a neighbouring switch brushed for an instant
            partial[flips % 7] = "1" if partial[flips % 7] == "0" else "0"
        rig.press(role, "".join(partial))
        clock.advance(0.002)
    rig.press(role, word)


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    attacker=st.sampled_from(all_pieces()),
    defender_rank=st.sampled_from(list(Rank)),
    noise=st.lists(st.tuples(st.integers(0, 7), st.integers(0, 20)), max_size=6),
)
@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
def test_device_bouncing_keys_never_give_a_wrong_verdict(
    tmp_path_factory: pytest.TempPathFactory,
    attacker: Piece,
    defender_rank: Rank,
    noise: list[tuple[int, int]],
) -> None:
    from gpiozero.pins.mock import MockFactory, MockPWMPin

    defender = Piece(attacker.side.opponent, defender_rank)
    tmp = tmp_path_factory.mktemp("bounce")
    factory = MockFactory(pin_class=MockPWMPin)
    config = load_config(write_config(tmp), data_dir=tmp / "data")
    # On a fake clock a contact lasts 2 ms however long a busy machine stalls the test.
    clock = FakeClock()
    arbiter = build_arbiter(config, pin_factory=factory, clock=clock)
    rig = Rig(arbiter, factory).start()
    try:
        rig.seat(Role.ATTACKER, attacker)
        _bouncy_press(rig, clock, Role.DEFENDER, DEFAULT_KEYCODE.codeword(defender), noise)
        clock.advance(config.reader.debounce_ms / 1000)  # the final press settles
        wait_until(lambda: rig.count() == 1)
        final = DEFAULT_KEYCODE.codeword(defender)
        rig.wait_reading(Role.DEFENDER, SlotState.PRESENT, final)
        rig.settle()  # the key's last reading handled: nothing more may be counted
        assert rig.count() == 1
        challenge = arbiter.store.current.challenges[0]
        assert (challenge.attacker, challenge.defender) == (attacker, defender)
        expected, _ = oracle(attacker.rank.code, defender.rank.code)
        assert challenge.verdict.survivor.value == expected
    finally:
        arbiter.close()
        factory.reset()


def test_device_ending_for_another_game_is_refused(rig: Rig) -> None:
    from arbiter.rules.errors import WrongGameError

    rig.challenge("W:COL", "B:MAJ")
    rig.empty()
    assert rig.arbiter.new_game() == 2
    with pytest.raises(WrongGameError):
        rig.arbiter.declare_end(EndingKind.RESIGNATION, Side.WHITE, game_id=1)
    assert rig.arbiter.status()["ending"] is None
    rig.arbiter.declare_end(EndingKind.DRAW, None, game_id=2)
    assert rig.arbiter.status()["ending"]["kind"] == "draw"


def test_device_busy_command_times_out_and_never_runs(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from arbiter.device.arbiter import DeviceError

    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        held.set()
        release.wait()

    threading.Thread(target=lambda: rig.arbiter._call(hold), daemon=True).start()
    assert held.wait(WAIT)  # the worker is now held
    with pytest.raises(DeviceError, match="busy"):
        rig.arbiter._call(rig.arbiter._do_new_game, timeout=0.2)
    release.set()
    rig.settle()  # queued behind the withdrawn NEW GAME: it would have run by now
    assert rig.arbiter.status()["game_id"] == 1  # the withdrawn NEW GAME never happened


def test_device_new_game_on_full_disk_keeps_the_game(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    import arbiter.storage.journal as journal
    from arbiter.device.arbiter import DeviceError

    rig.challenge("W:COL", "B:MAJ")

    def full_disk(path: Path, payload: bytes) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(journal, "write_durably", full_disk)
    with pytest.raises(DeviceError, match="cannot be written"):
        rig.arbiter.new_game()
    status = rig.arbiter.status()
    assert (status["game_id"], status["ending"]) == (1, None)


@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
def test_device_new_game_button_failure_is_logged(
    rig: Rig, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import arbiter.storage.journal as journal

    def full_disk(path: Path, payload: bytes) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(journal, "write_durably", full_disk)
    pin = rig.factory.pin(rig.config.button.new_game_pin)
    rig.hold_new_game()  # asks; the second hold confirms, and the disk refuses the game
    with caplog.at_level(logging.WARNING, logger="arbiter.device"):
        pin.drive_low()
        wait_until(
            lambda: any("NEW GAME button" in r.getMessage() for r in caplog.records),
            what="a warning that the held button started no game",
        )
        pin.drive_high()
    assert "No space left" in next(
        r.getMessage() for r in caplog.records if "NEW GAME button" in r.getMessage()
    )
    assert rig.arbiter.status()["game_id"] == 1


@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
def test_device_selftest_refused_during_a_game(rig: Rig) -> None:
    from arbiter.device.arbiter import DeviceError

    rig.challenge("W:COL", "B:MAJ")
    with pytest.raises(DeviceError, match="in progress"):
        rig.arbiter.selftest(tunes=["ready"])
    assert "tune ready: played" in "\n".join(rig.arbiter.selftest(tunes=["ready"], force=True))


def test_device_last_verdict_survives_restart(tmp_path: Path, mock_factory: Any) -> None:
    arbiter = _played_then_restarted(tmp_path, mock_factory, "W:MAJ", "B:MAJ")
    try:
        assert arbiter.status()["last_verdict"] == "split"
    finally:
        arbiter.close()


def test_device_shutdown_while_deciding_records_nothing(tmp_path: Path, mock_factory: Any) -> None:
    path = write_config(tmp_path, battle=True)
    path.write_text(path.read_text().replace("b=600:g4,c,e,4g.,e,2g", "b=120:g4,c,e,4g.,e,2g"))
    config = load_config(path, data_dir=tmp_path / "data")
    arbiter = build_arbiter(config, pin_factory=mock_factory)
    rig = Rig(arbiter, mock_factory).start()
    rig.seat(Role.ATTACKER, "W:COL")
    rig.seat(Role.DEFENDER, "B:MAJ")
    wait_until(lambda: arbiter.state is DeviceState.DECIDING)
    arbiter.close()  # SIGTERM mid-phrase: the players never saw a verdict
    assert read_game(config.data_dir, 1).challenges == []
