"""Default tunes: what PRODUCT.md and HARDWARE-NOTES.md ask of each."""

from __future__ import annotations

import pytest

from arbiter.tunes.defaults import DEFAULT_TUNES, REQUIRED_TUNES, load_tunes
from arbiter.tunes.errors import RtttlError
from arbiter.tunes.rtttl import Tune

# Copied from HARDWARE-NOTES.md, "Tunes".
TAPS = (
    "Taps:d=4,o=5,b=63:8g4.,16g4,2c,8g4.,16c,2e,8g4,8c,e,8g4,8c,e,8g4,8c,2e,8c.,16e,2g,"
    "8e.,16c,2g4,8g4.,16g4,1c"
)
# TonalBuzzer(mid_tone=Tone("C5"), octaves=2) spans C3..C7.
C3_HZ = 130.81
C7_HZ = 2093.00


@pytest.fixture(scope="module")
def tunes() -> dict[str, Tune]:
    return load_tunes(DEFAULT_TUNES)


def _pitches(tune: Tune) -> list[float]:
    return [note.frequency for note in tune.notes if note.frequency is not None]


def test_default_tunes_cover_required_names() -> None:
    assert set(REQUIRED_TUNES) == {"battle", "taps", "error", "ready", "fault", "confirm"}
    assert set(REQUIRED_TUNES) <= set(DEFAULT_TUNES)


def test_default_tunes_are_read_only() -> None:
    with pytest.raises(TypeError):
        DEFAULT_TUNES["taps"] = "x::c"  # type: ignore[index]


def test_default_taps_is_the_hardware_notes_rtttl() -> None:
    assert DEFAULT_TUNES["taps"] == TAPS


def test_default_battle_is_the_charge_phrase(tunes: dict[str, Tune]) -> None:
    battle = tunes["battle"]
    assert [note.name for note in battle.notes] == ["G4", "C5", "E5", "G5", "E5", "G5"]
    assert 1.5 <= battle.duration <= 2.5


def test_default_error_is_a_short_low_double_buzz(tunes: dict[str, Tune]) -> None:
    error = tunes["error"]
    pitches = _pitches(error)
    assert len(pitches) == 2
    assert all(hz < 400 for hz in pitches)
    assert error.duration < 0.6


def test_default_ready_rises(tunes: dict[str, Tune]) -> None:
    ready = tunes["ready"]
    pitches = _pitches(ready)
    assert 2 <= len(pitches) <= 3
    assert pitches == sorted(pitches)
    assert len(set(pitches)) == len(pitches)
    assert ready.duration < 1.0


def test_default_fault_is_short_and_unlike_error(tunes: dict[str, Tune]) -> None:
    fault = tunes["fault"]
    assert fault.duration < 1.0
    assert _pitches(fault) != _pitches(tunes["error"])
    assert _pitches(fault) != _pitches(tunes["ready"])


def test_default_tunes_fit_the_buzzer_range(tunes: dict[str, Tune]) -> None:
    for name, tune in tunes.items():
        for hz in _pitches(tune):
            assert C3_HZ - 0.5 <= hz <= C7_HZ + 0.5, name


def test_load_tunes_keeps_names() -> None:
    loaded = load_tunes({"one": "a:d=4,o=5,b=60:c", "two": "b::p"})
    assert set(loaded) == {"one", "two"}
    assert loaded["one"].notes[0].name == "C5"
    assert loaded["two"].notes[0].frequency is None


def test_load_tunes_error_names_the_tune() -> None:
    with pytest.raises(RtttlError) as caught:
        load_tunes({"fine": "a::c", "broken": "b::c,zz"})
    assert caught.value.tune == "broken"
    assert "'broken'" in str(caught.value)
    assert caught.value.position == 5
    assert caught.value.token == "zz"
