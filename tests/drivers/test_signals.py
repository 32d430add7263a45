"""Signals over gpiozero mock pins: LED states, buzzer pitches, timing."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from arbiter.drivers.errors import SignalsClosedError, UnknownTuneError
from arbiter.drivers.signals import LedMode, OutputsSnapshot, Signals
from arbiter.rules.verdict import Survivor
from arbiter.tunes.defaults import DEFAULT_TUNES, load_tunes
from arbiter.tunes.rtttl import Note, Tune, note_frequency, parse
from tests.support.buzzer import record_frequencies
from tests.support.clock import FakeClock
from tests.support.waiting import wait_until

ATTACKER, DEFENDER, STATUS, BUZZER = 17, 27, 22, 18
# Frequencies given in the brief, in Hz.
HZ = {"G4": 392.00, "C5": 523.25, "E5": 659.26, "G5": 783.99}
# From HARDWARE-NOTES.md, "Tunes".
TAPS_GROUPS = "G G C | G C E | G C E | G C E | G C E | C E G | E C G | G G C"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def make(mock_factory: Any, clock: FakeClock) -> Iterator[Callable[..., Signals]]:
    made: list[Signals] = []

    def build(**kwargs: Any) -> Signals:
        tunes = load_tunes(DEFAULT_TUNES)
        tunes.update(kwargs.pop("extra_tunes", {}))
        options: dict[str, Any] = {
            "pin_factory": mock_factory,
            "sleep": clock.sleep,
            "clock": clock,
        }
        options.update(kwargs)
        signals = Signals(ATTACKER, DEFENDER, STATUS, BUZZER, tunes, **options)
        made.append(signals)
        return signals

    yield build
    for signals in made:
        signals.close()


def _lit(factory: Any, pin: int) -> bool:
    return bool(factory.pin(pin).state)


def _sounded(log: list[float | None]) -> list[float]:
    return [hz for hz in log if hz is not None]


def _pitch_name(frequency: float) -> str:
    matches = [name for name, hz in HZ.items() if abs(frequency - hz) <= 0.5]
    assert len(matches) == 1, frequency
    return matches[0]


def _changes(factory: Any, pin: int) -> int:
    return len(factory.pin(pin).states) - 1


def test_signals_module_imports_without_gpiozero() -> None:
    code = "import sys, arbiter.drivers.signals; print('gpiozero' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_signals_start_dark(make: Callable[..., Signals], mock_factory: Any) -> None:
    signals = make()
    assert not any(_lit(mock_factory, pin) for pin in (ATTACKER, DEFENDER, STATUS))
    assert mock_factory.pin(BUZZER).frequency is None
    snap = signals.snapshot()
    assert (snap.attacker.mode, snap.defender.mode, snap.status.mode) == (LedMode.OFF,) * 3
    assert snap.playing is None
    assert snap.played == ()


def test_signals_ready_lights_status_and_plays(
    make: Callable[..., Signals], mock_factory: Any, clock: FakeClock
) -> None:
    signals = make()
    signals.result(Survivor.ATTACKER)
    log = record_frequencies(mock_factory, BUZZER)
    start = clock.now
    signals.ready()
    assert _lit(mock_factory, STATUS)
    assert not _lit(mock_factory, ATTACKER)
    assert not _lit(mock_factory, DEFENDER)
    ready = parse(DEFAULT_TUNES["ready"])
    assert clock.now - start == pytest.approx(ready.duration)
    assert _sounded(log) == pytest.approx([n.frequency for n in ready.notes])
    assert log[-1] is None  # silent afterwards
    snap = signals.snapshot()
    assert snap.status.mode is LedMode.ON
    assert [played.name for played in snap.played] == ["ready"]
    assert snap.playing is None


def test_signals_waiting_blinks_status_slowly(
    make: Callable[..., Signals], mock_factory: Any
) -> None:
    signals = make()
    signals.waiting()
    snap = signals.snapshot()
    assert snap.status.mode is LedMode.BLINK
    assert snap.status.blink is not None
    assert snap.status.blink.on_time >= 0.5
    wait_until(lambda: _changes(mock_factory, STATUS) >= 2)  # on, then off


@pytest.mark.parametrize(
    ("survivor", "attacker_lit", "defender_lit"),
    [(Survivor.ATTACKER, True, False), (Survivor.DEFENDER, False, True)],
)
def test_signals_result_lights_the_survivor(
    make: Callable[..., Signals],
    mock_factory: Any,
    clock: FakeClock,
    survivor: Survivor,
    attacker_lit: bool,
    defender_lit: bool,
) -> None:
    signals = make()
    start = clock.now
    signals.result(survivor)
    assert clock.now == start  # no tune: the verdict shows at once
    assert _lit(mock_factory, ATTACKER) is attacker_lit
    assert _lit(mock_factory, DEFENDER) is defender_lit
    snap = signals.snapshot()
    assert snap.attacker.mode is (LedMode.ON if attacker_lit else LedMode.OFF)
    assert snap.defender.mode is (LedMode.ON if defender_lit else LedMode.OFF)
    assert snap.played == ()


def test_signals_result_split_blinks_both_together(
    make: Callable[..., Signals], mock_factory: Any
) -> None:
    signals = make()
    writers: dict[int, set[int]] = {ATTACKER: set(), DEFENDER: set()}
    for pin in (ATTACKER, DEFENDER):
        mock_pin = mock_factory.pin(pin)
        mock_pin.clear_states()
        original = mock_pin._change_state

        def spy(value: object, pin: int = pin, original: Any = original) -> bool:
            writers[pin].add(threading.get_ident())
            return bool(original(value))

        mock_pin._change_state = spy
    signals.result(Survivor.NONE)
    snap = signals.snapshot()
    assert snap.attacker.mode is LedMode.BLINK
    assert snap.attacker == snap.defender
    wait_until(lambda: _changes(mock_factory, ATTACKER) >= 3)
    wait_until(lambda: _changes(mock_factory, DEFENDER) >= 3)
    # One thread drives both LEDs, so they cannot drift apart.
    blinkers = (writers[ATTACKER] | writers[DEFENDER]) - {threading.get_ident()}
    assert len(blinkers) == 1
    signals.clear()
    attacker = [s.state for s in mock_factory.pin(ATTACKER).states]
    defender = [s.state for s in mock_factory.pin(DEFENDER).states]
    assert attacker == defender


def test_signals_result_split_differs_from_single_winner(make: Callable[..., Signals]) -> None:
    signals = make()
    shown = {}
    for survivor in Survivor:
        signals.result(survivor)
        snap = signals.snapshot()
        shown[survivor] = (snap.attacker, snap.defender)
    assert len(set(shown.values())) == 3


def test_signals_taps_pitch_groups(
    make: Callable[..., Signals], mock_factory: Any, clock: FakeClock
) -> None:
    signals = make()
    log = record_frequencies(mock_factory, BUZZER)
    start = clock.now
    signals.taps()
    sounded = [_pitch_name(hz) for hz in _sounded(log)]
    assert len(sounded) == 24
    letters = [name[0] for name in sounded]
    groups = [group.split() for group in TAPS_GROUPS.split("|")]
    assert [letters[i : i + 3] for i in range(0, 24, 3)] == groups
    # Octaves read off the RTTTL in HARDWARE-NOTES.md.
    assert sounded[17] == "G5"
    assert sounded.count("G5") == 1
    # Every note is followed by silence, so "G G" is heard as two notes.
    assert log[1::2] == [None] * 24
    assert clock.now - start == pytest.approx(parse(DEFAULT_TUNES["taps"]).duration)
    assert mock_factory.pin(BUZZER).frequency is None


def test_signals_active_buzzer_beeps_each_note(
    make: Callable[..., Signals], mock_factory: Any
) -> None:
    beeps = Tune("beeps", (Note(440.0, 0.1, "A4"), Note(None, 0.1), Note(440.0, 0.1, "A4")))
    signals = make(buzzer_kind="active", extra_tunes={"beeps": beeps})
    pin = mock_factory.pin(BUZZER)
    pin.clear_states()
    signals.play("beeps")
    states = [bool(s.state) for s in pin.states]
    assert states == [False, True, False, True, False]
    signals.taps()
    taps_states = [bool(s.state) for s in pin.states]
    rises = sum(1 for a, b in itertools.pairwise(taps_states) if not a and b)
    assert rises == 2 + 24


def test_signals_passive_buzzer_clamps_out_of_range_notes(
    make: Callable[..., Signals], mock_factory: Any
) -> None:
    # (played, expected Hz): C2 -> C3, C8 -> C7, B8 -> B6, A2 -> A3, the range's own
    # ends unchanged, and a slightly sharp C7 is still C7, not C6.
    cases = [
        (note_frequency("c", False, 2), 130.813),
        (note_frequency("c", False, 8), 2093.005),
        (note_frequency("b", False, 8), 1975.533),
        (110.0, 220.0),
        (note_frequency("c", False, 3), 130.813),
        (note_frequency("c", False, 7), 2093.005),
        (2095.0, 2093.005),
        (440.0, 440.0),
    ]
    wide = Tune("wide", tuple(Note(hz, 0.05) for hz, _ in cases))
    signals = make(extra_tunes={"wide": wide})
    log = record_frequencies(mock_factory, BUZZER)
    signals.play("wide")
    assert _sounded(log) == pytest.approx([hz for _, hz in cases], abs=0.01)


def test_signals_no_buzzer_keeps_timing(
    make: Callable[..., Signals], mock_factory: Any, clock: FakeClock
) -> None:
    signals = make(buzzer_kind="none")
    start = clock.now
    signals.battle()
    assert clock.now - start == pytest.approx(parse(DEFAULT_TUNES["battle"]).duration)
    # The buzzer pin was never claimed.
    from gpiozero import LED

    LED(BUZZER, pin_factory=mock_factory).close()


def test_signals_battle_flashes_alternately_and_plays_phrase(
    make: Callable[..., Signals], mock_factory: Any
) -> None:
    snaps: list[OutputsSnapshot] = []
    signals = make(on_change=snaps.append)
    log = record_frequencies(mock_factory, BUZZER)
    signals.battle()
    battle = parse(DEFAULT_TUNES["battle"])
    assert _sounded(log) == pytest.approx([n.frequency for n in battle.notes])
    lit = [(s.attacker.mode, s.defender.mode) for s in snaps if s.playing is not None]
    assert (LedMode.ON, LedMode.ON) not in lit
    assert (LedMode.ON, LedMode.OFF) in lit
    assert (LedMode.OFF, LedMode.ON) in lit
    # Alternating: the attacker's LED went on and off several times, and so did the defender's.
    assert _changes(mock_factory, ATTACKER) >= 4
    assert _changes(mock_factory, DEFENDER) >= 4
    assert not _lit(mock_factory, ATTACKER)
    assert not _lit(mock_factory, DEFENDER)


def _battle_trace(
    signals: Signals, clock: FakeClock, log: list[float | None], snaps: list[OutputsSnapshot]
) -> tuple[float, list[float | None], list[tuple[LedMode, LedMode]]]:
    log.clear()
    snaps.clear()
    start = clock.now
    signals.battle()
    lights = [(s.attacker.mode, s.defender.mode) for s in snaps]
    return clock.now - start, list(log), lights


def test_signals_battle_identical_whatever_came_before(
    make: Callable[..., Signals], mock_factory: Any, clock: FakeClock
) -> None:
    snaps: list[OutputsSnapshot] = []
    signals = make(on_change=snaps.append)
    log = record_frequencies(mock_factory, BUZZER)
    first = _battle_trace(signals, clock, log, snaps)
    signals.result(Survivor.ATTACKER)
    second = _battle_trace(signals, clock, log, snaps)
    signals.result(Survivor.NONE)
    third = _battle_trace(signals, clock, log, snaps)
    assert first == second == third
    assert first[0] == pytest.approx(parse(DEFAULT_TUNES["battle"]).duration)


def test_signals_battle_takes_its_time_in_real_time(
    make: Callable[..., Signals], mock_factory: Any
) -> None:
    # A whole note lasts 1 s at b=240: 3/16 + 1/8 = 0.3125 s.
    short = "Short:d=16,o=5,b=240:c,e,g,8c6"
    signals = make(sleep=None, clock=time.monotonic, extra_tunes={"battle": parse(short)})
    for _ in range(2):
        start = time.monotonic()
        signals.battle()
        assert time.monotonic() - start >= 0.3125 - 0.005


def test_signals_battle_phrase_off_returns_at_once(
    make: Callable[..., Signals], mock_factory: Any, clock: FakeClock
) -> None:
    signals = make(battle_phrase=False)
    log = record_frequencies(mock_factory, BUZZER)
    start = clock.now
    signals.battle()
    assert clock.now == start
    assert log == []
    assert signals.snapshot().played == ()
    assert _changes(mock_factory, ATTACKER) == 0


def test_signals_result_during_battle_shows_after_phrase(
    make: Callable[..., Signals], mock_factory: Any, clock: FakeClock
) -> None:
    signals: Signals | None = None

    def sleep(seconds: float) -> None:
        clock.sleep(seconds)
        if len(clock.sleeps) == 3:
            assert signals is not None
            signals.result(Survivor.DEFENDER)

    signals = make(sleep=sleep)
    signals.battle()
    assert _lit(mock_factory, DEFENDER)
    assert not _lit(mock_factory, ATTACKER)
    assert signals.snapshot().defender.mode is LedMode.ON


def test_signals_game_over_keeps_winner_leds(
    make: Callable[..., Signals], mock_factory: Any
) -> None:
    signals = make()
    signals.result(Survivor.DEFENDER)
    mock_factory.pin(DEFENDER).clear_states()
    signals.game_over()
    snap = signals.snapshot()
    assert snap.defender.mode is LedMode.ON
    assert snap.status.mode is LedMode.BLINK
    assert snap.status.blink is not None
    assert snap.status.blink.flashes == 2
    wait_until(lambda: _changes(mock_factory, STATUS) >= 4)
    assert _lit(mock_factory, DEFENDER)
    assert _changes(mock_factory, DEFENDER) == 0


def test_signals_error_and_fault_are_distinct(
    make: Callable[..., Signals], mock_factory: Any, clock: FakeClock
) -> None:
    signals = make()
    signals.waiting()
    slow = signals.snapshot().status
    signals.game_over()
    over = signals.snapshot().status

    start = clock.now
    signals.error()
    error = signals.snapshot().status
    assert clock.now - start == pytest.approx(parse(DEFAULT_TUNES["error"]).duration)
    wait_until(lambda: _changes(mock_factory, STATUS) >= 6)

    start = clock.now
    signals.fault()
    fault = signals.snapshot().status
    assert clock.now - start == pytest.approx(parse(DEFAULT_TUNES["fault"]).duration)

    assert all(state.mode is LedMode.BLINK for state in (slow, over, error, fault))
    assert len({slow, over, error, fault}) == 4
    assert error.blink is not None and slow.blink is not None
    assert error.blink.on_time < slow.blink.on_time
    assert [p.name for p in signals.snapshot().played] == ["error", "fault"]


def test_signals_clear_goes_back_to_ready(
    make: Callable[..., Signals], mock_factory: Any, clock: FakeClock
) -> None:
    signals = make()
    signals.result(Survivor.NONE)
    signals.error()
    start = clock.now
    signals.clear()
    assert clock.now == start
    assert not _lit(mock_factory, ATTACKER)
    assert not _lit(mock_factory, DEFENDER)
    assert _lit(mock_factory, STATUS)
    snap = signals.snapshot()
    assert (snap.attacker.mode, snap.defender.mode, snap.status.mode) == (
        LedMode.OFF,
        LedMode.OFF,
        LedMode.ON,
    )
    assert [p.name for p in snap.played] == ["error"]


def test_signals_off_darkens_everything(make: Callable[..., Signals], mock_factory: Any) -> None:
    signals = make()
    signals.result(Survivor.ATTACKER)
    signals.fault()
    signals.off()
    assert not any(_lit(mock_factory, pin) for pin in (ATTACKER, DEFENDER, STATUS))
    assert mock_factory.pin(BUZZER).frequency is None
    snap = signals.snapshot()
    assert (snap.attacker.mode, snap.defender.mode, snap.status.mode) == (LedMode.OFF,) * 3


def test_signals_off_stops_a_playing_tune(make: Callable[..., Signals], mock_factory: Any) -> None:
    long = parse("Long:d=1,o=5,b=25:c,d,e,f,g,a,b,c6,d6,e6")  # 96 s
    signals = make(sleep=None, clock=time.monotonic, extra_tunes={"long": long})
    player = threading.Thread(target=signals.play, args=("long",), daemon=True)
    player.start()
    # snapshot() answers while the tune holds the buzzer.
    wait_until(lambda: signals.snapshot().playing is not None)
    assert signals.snapshot().playing.name == "long"  # type: ignore[union-attr]
    assert mock_factory.pin(BUZZER).frequency is not None
    signals.off()
    player.join(timeout=30)
    assert not player.is_alive()
    assert signals.snapshot().playing is None
    assert mock_factory.pin(BUZZER).frequency is None


def test_signals_close_is_idempotent(make: Callable[..., Signals], mock_factory: Any) -> None:
    signals = make()
    signals.result(Survivor.NONE)
    signals.waiting()
    signals.close()
    signals.close()
    assert signals.closed
    # The pins are free again.
    from gpiozero import LED

    for pin in (ATTACKER, DEFENDER, STATUS, BUZZER):
        LED(pin, pin_factory=mock_factory).close()
    with pytest.raises(SignalsClosedError):
        signals.ready()
    with pytest.raises(SignalsClosedError):
        signals.result(Survivor.ATTACKER)
    assert signals.snapshot().status.mode is LedMode.OFF


def test_signals_play_unknown_tune(make: Callable[..., Signals]) -> None:
    signals = make()
    with pytest.raises(UnknownTuneError):
        signals.play("reveille")


def test_signals_require_every_tune(mock_factory: Any) -> None:
    tunes = load_tunes(DEFAULT_TUNES)
    del tunes["fault"]
    with pytest.raises(UnknownTuneError, match="fault"):
        Signals(ATTACKER, DEFENDER, STATUS, BUZZER, tunes, pin_factory=mock_factory)


def test_signals_reject_unknown_buzzer_kind(mock_factory: Any) -> None:
    with pytest.raises(ValueError):
        Signals(
            ATTACKER,
            DEFENDER,
            STATUS,
            BUZZER,
            load_tunes(DEFAULT_TUNES),
            buzzer_kind="loud",
            pin_factory=mock_factory,
        )


def test_signals_default_pin_factory(mock_factory: Any) -> None:
    # No pin_factory: gpiozero's default, here the fixture's MockFactory.
    signals = Signals(ATTACKER, DEFENDER, STATUS, BUZZER, load_tunes(DEFAULT_TUNES))
    try:
        signals.result(Survivor.ATTACKER)
        assert _lit(mock_factory, ATTACKER)
    finally:
        signals.close()


def test_signals_snapshot_history_is_bounded_and_ordered(
    make: Callable[..., Signals], clock: FakeClock
) -> None:
    signals = make()
    for _ in range(25):
        signals.play("ready")
    played = signals.snapshot().played
    assert len(played) == 20
    starts = [p.started for p in played]
    assert starts == sorted(starts)
    assert len(set(starts)) == 20
    assert starts[-1] == pytest.approx(clock.now - parse(DEFAULT_TUNES["ready"]).duration)


def test_signals_snapshot_to_dict_is_json(make: Callable[..., Signals]) -> None:
    signals = make()
    signals.error()
    signals.result(Survivor.NONE)
    data = json.loads(json.dumps(signals.snapshot().to_dict()))
    assert data["leds"]["attacker"]["mode"] == "blink"
    assert data["leds"]["attacker"]["blink"]["on_time"] > 0
    assert data["leds"]["status"] == {"mode": "blink", "blink": data["leds"]["status"]["blink"]}
    assert data["buzzer"] == "passive"
    assert data["playing"] is None
    assert [p["name"] for p in data["played"]] == ["error"]
    assert isinstance(data["version"], int)


def test_signals_on_change_follows_every_change(make: Callable[..., Signals]) -> None:
    snaps: list[OutputsSnapshot] = []
    signals = make(on_change=snaps.append)
    signals.result(Survivor.ATTACKER)
    assert snaps[-1].attacker.mode is LedMode.ON
    signals.waiting()
    assert snaps[-1].status.mode is LedMode.BLINK
    signals.play("ready")
    assert any(s.playing is not None and s.playing.name == "ready" for s in snaps)
    assert snaps[-1].playing is None
    versions = [s.version for s in snaps]
    assert versions == sorted(versions)
    assert snaps[-1] == signals.snapshot()


def test_signals_broken_listener_does_not_stop_signals(
    make: Callable[..., Signals], mock_factory: Any
) -> None:
    def broken(_: OutputsSnapshot) -> None:
        raise RuntimeError("listener down")

    signals = make(on_change=broken)
    signals.result(Survivor.DEFENDER)
    signals.taps()
    assert _lit(mock_factory, DEFENDER)
