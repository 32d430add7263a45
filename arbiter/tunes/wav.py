"""Render a :class:`~arbiter.tunes.rtttl.Tune` to a WAV file, to preview it without a buzzer.

The output is mono, 16-bit: a sine tone per note, silence for rests. Each
note fades in and out over a few milliseconds and ends with a short silence,
so repeated notes are heard as separate notes (as on the piezo) and no note
clicks. The file lasts exactly as long as the tune.
"""

from __future__ import annotations

import io
import math
import os
import struct
import wave
from pathlib import Path

from arbiter.tunes.rtttl import Tune

__all__ = ["FADE_SECONDS", "GAP_SECONDS", "render", "render_bytes"]

#: Length of each note's fade in and fade out.
FADE_SECONDS: float = 0.004
#: Silence at the end of each note; never more than a quarter of the note.
GAP_SECONDS: float = 0.012

_FULL_SCALE = 32767


def _samples(tune: Tune, sample_rate: int, volume: float) -> list[int]:
    samples: list[int] = []
    amplitude = volume * _FULL_SCALE
    elapsed = 0.0
    for note in tune.notes:
        # Boundaries from the running total, so rounding never accumulates.
        start = round(elapsed * sample_rate)
        elapsed += note.seconds
        length = round(elapsed * sample_rate) - start
        if note.frequency is None:
            samples.extend([0] * length)
            continue
        gap = min(round(GAP_SECONDS * sample_rate), length // 4)
        sounding = length - gap
        fade = min(round(FADE_SECONDS * sample_rate), sounding // 4)
        step = 2 * math.pi * note.frequency / sample_rate
        for i in range(sounding):
            envelope = 1.0
            if i < fade:
                envelope = i / fade
            elif i >= sounding - fade:
                envelope = (sounding - 1 - i) / fade
            samples.append(round(amplitude * envelope * math.sin(step * i)))
        samples.extend([0] * gap)
    return samples


def render_bytes(tune: Tune, sample_rate: int = 22050, volume: float = 0.5) -> bytes:
    """The complete WAV file for ``tune``.

    :raises ValueError: if ``sample_rate`` is not positive or ``volume`` not within 0..1.
    """
    if sample_rate <= 0:
        raise ValueError(f"sample rate must be positive: {sample_rate!r}")
    if not 0.0 <= volume <= 1.0:
        raise ValueError(f"volume must be within 0..1: {volume!r}")
    samples = _samples(tune, sample_rate, volume)
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(sample_rate)
        out.writeframes(struct.pack(f"<{len(samples)}h", *samples))
    return buffer.getvalue()


def render(
    tune: Tune,
    path: str | os.PathLike[str],
    sample_rate: int = 22050,
    volume: float = 0.5,
) -> None:
    """Write ``tune`` to the WAV file at ``path``.

    :raises ValueError: if ``sample_rate`` is not positive or ``volume`` not within 0..1.
    :raises OSError: if the file cannot be written.
    """
    Path(path).write_bytes(render_bytes(tune, sample_rate, volume))
