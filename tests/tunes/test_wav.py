"""WAV rendering, read back with the standard ``wave`` module."""

from __future__ import annotations

import io
import struct
import wave
from pathlib import Path

import pytest

from arbiter.tunes.defaults import DEFAULT_TUNES
from arbiter.tunes.rtttl import Tune, parse
from arbiter.tunes.wav import render, render_bytes

TAPS = parse(DEFAULT_TUNES["taps"])
FULL_SCALE = 32767


def _read(data: bytes) -> tuple[wave._wave_params, list[int]]:
    with wave.open(io.BytesIO(data), "rb") as wav:
        params = wav.getparams()
        frames = wav.readframes(params.nframes)
    return params, list(struct.unpack(f"<{params.nframes}h", frames))


def _segments(tune: Tune, rate: int) -> list[tuple[int, int]]:
    bounds = []
    elapsed = 0.0
    for note in tune.notes:
        start = elapsed
        elapsed += note.seconds
        bounds.append((round(start * rate), round(elapsed * rate)))
    return bounds


def _frequency(samples: list[int], rate: int) -> float:
    """Zero-crossing estimate: half-periods between the first and the last crossing."""
    crossings = [i for i in range(1, len(samples)) if (samples[i - 1] < 0) != (samples[i] < 0)]
    assert len(crossings) >= 4
    return (len(crossings) - 1) / 2 / ((crossings[-1] - crossings[0]) / rate)


def test_render_bytes_is_mono_16_bit() -> None:
    params, _ = _read(render_bytes(TAPS))
    assert params.nchannels == 1
    assert params.sampwidth == 2
    assert params.framerate == 22050


def test_render_bytes_duration_matches_tune() -> None:
    params, _ = _read(render_bytes(TAPS))
    assert params.nframes / params.framerate == pytest.approx(TAPS.duration, rel=0.01)


def test_render_bytes_other_sample_rate() -> None:
    params, _ = _read(render_bytes(TAPS, sample_rate=8000))
    assert params.framerate == 8000
    assert params.nframes / 8000 == pytest.approx(TAPS.duration, rel=0.01)


def test_render_bytes_note_frequencies() -> None:
    rate = 22050
    _, samples = _read(render_bytes(TAPS, sample_rate=rate))
    for note, (start, end) in zip(TAPS.notes, _segments(TAPS, rate), strict=True):
        assert note.frequency is not None
        # Skip the fades and the gap at the ends of the note.
        middle = samples[start + rate // 50 : end - rate // 25]
        assert _frequency(middle, rate) == pytest.approx(note.frequency, rel=0.02), note.name


def test_render_bytes_high_and_sharp_notes() -> None:
    tune = parse("x:d=4,o=5,b=120:a,c#6,f#6,b6,c7")
    rate = 22050
    _, samples = _read(render_bytes(tune, sample_rate=rate))
    for note, (start, end) in zip(tune.notes, _segments(tune, rate), strict=True):
        assert note.frequency is not None
        middle = samples[start + rate // 50 : end - rate // 25]
        assert _frequency(middle, rate) == pytest.approx(note.frequency, rel=0.02), note.name


def test_render_bytes_rest_is_silent() -> None:
    tune = parse("x:d=4,o=5,b=120:c,p,c")
    rate = 22050
    _, samples = _read(render_bytes(tune, sample_rate=rate))
    start, end = _segments(tune, rate)[1]
    assert max(abs(s) for s in samples[start:end]) == 0
    first_start, first_end = _segments(tune, rate)[0]
    assert max(abs(s) for s in samples[first_start:first_end]) > FULL_SCALE // 4


def test_render_bytes_repeated_notes_are_separated() -> None:
    tune = parse("x:d=8,o=5,b=120:c,c,c")
    rate = 22050
    _, samples = _read(render_bytes(tune, sample_rate=rate, volume=1.0))
    for _, end in _segments(tune, rate)[:2]:
        # The last few milliseconds of each note are (nearly) quiet.
        tail = samples[end - rate // 250 : end]
        assert max(abs(s) for s in tail) < FULL_SCALE * 0.05


def test_render_bytes_volume_scales_peak() -> None:
    tune = parse("x:d=4,o=5,b=120:a")
    _, loud = _read(render_bytes(tune, volume=1.0))
    _, quiet = _read(render_bytes(tune, volume=0.25))
    assert max(abs(s) for s in loud) >= FULL_SCALE * 0.95
    assert FULL_SCALE * 0.2 <= max(abs(s) for s in quiet) <= FULL_SCALE * 0.25 + 1


@pytest.mark.parametrize("volume", [-0.1, 1.5])
def test_render_bytes_rejects_bad_volume(volume: float) -> None:
    with pytest.raises(ValueError):
        render_bytes(TAPS, volume=volume)


def test_render_bytes_rejects_bad_sample_rate() -> None:
    with pytest.raises(ValueError):
        render_bytes(TAPS, sample_rate=0)


def test_render_writes_the_file(tmp_path: Path) -> None:
    tune = parse(DEFAULT_TUNES["battle"])
    target = tmp_path / "battle.wav"
    render(tune, target, sample_rate=11025, volume=0.3)
    assert target.read_bytes() == render_bytes(tune, sample_rate=11025, volume=0.3)
    render(tune, str(tmp_path / "again.wav"))
    params, _ = _read((tmp_path / "again.wav").read_bytes())
    assert params.nframes / params.framerate == pytest.approx(tune.duration, rel=0.01)
