"""RTTTL (Nokia ring tone text) tunes: parse ``name:d=4,o=5,b=63:8g4.,16g4,2c``.

A tune has three sections separated by colons: a name, defaults (``d=``
duration, ``o=`` octave, ``b=`` beats per minute, any order, each optional)
and comma-separated notes ``[duration]letter[#][.][octave][.]`` with ``p`` for
a rest. Pitches are equal-tempered from A4 = 440 Hz.

The parser is lenient where real-world files differ (case, whitespace between
tokens, the dot before or after the octave, octaves 3 to 8) and strict
everywhere else: any malformed input raises :class:`RtttlError` and nothing
else.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass

from arbiter.tunes.errors import RtttlError

__all__ = [
    "DEFAULT_BPM",
    "DEFAULT_DURATION",
    "DEFAULT_OCTAVE",
    "DURATIONS",
    "MAX_BPM",
    "MAX_OCTAVE",
    "MIN_OCTAVE",
    "Note",
    "RtttlError",
    "Tune",
    "note_frequency",
    "parse",
]

#: Defaults when the defaults section leaves a key out (the RTTTL specification's).
DEFAULT_DURATION: int = 4
DEFAULT_OCTAVE: int = 6
DEFAULT_BPM: int = 63

#: Note lengths as fractions of a whole note: 1 is a whole note, 32 a thirty-second.
DURATIONS: frozenset[int] = frozenset({1, 2, 4, 8, 16, 32})
#: The specification allows octaves 4 to 7; files in the wild use one more each way.
MIN_OCTAVE: int = 3
MAX_OCTAVE: int = 8
#: Beats per minute accepted in ``b=``; the specification's largest value is 900.
MAX_BPM: int = 900

_SEMITONES: dict[str, int] = {"c": 0, "d": 2, "e": 4, "f": 5, "g": 7, "a": 9, "b": 11}
_NAMES: tuple[str, ...] = ("C", "C#", "D", "D#", "E", "F", "F#", "G", "G#", "A", "A#", "B")
_A4_MIDI = 69
_A4_HZ = 440.0

# ASCII digits only: str.isdigit() accepts characters int() rejects, such as "²".
_NOTE = re.compile(
    r"(?P<duration>[0-9]+)?(?P<letter>[a-gp])(?P<sharp>#)?(?P<dot1>\.)?"
    r"(?P<octave>[0-9]+)?(?P<dot2>\.)?",
    re.ASCII | re.IGNORECASE,
)
_DEFAULT = re.compile(r"(?P<key>[a-z]+)\s*=\s*(?P<value>[0-9]+)", re.ASCII | re.IGNORECASE)
# Longer numbers are never valid, and int() refuses strings over 4300 digits.
_MAX_DIGITS = 4


@dataclass(frozen=True)
class Note:
    """One note: ``frequency`` in Hz (None for a rest), ``seconds`` long, ``name`` as ``"C#5"``."""

    frequency: float | None
    seconds: float
    name: str | None = None

    @property
    def is_rest(self) -> bool:
        return self.frequency is None


@dataclass(frozen=True)
class Tune:
    """A named sequence of notes."""

    name: str
    notes: tuple[Note, ...]

    @property
    def duration(self) -> float:
        """Total length in seconds, rests included."""
        return sum(note.seconds for note in self.notes)


def _midi(letter: str, sharp: bool, octave: int) -> int:
    return 12 * (octave + 1) + _SEMITONES[letter.lower()] + int(sharp)


def note_frequency(letter: str, sharp: bool, octave: int) -> float:
    """Equal-tempered frequency in Hz of ``letter`` (a to g), raised a semitone if ``sharp``.

    :raises KeyError: if ``letter`` is not a note letter.
    """
    semitones = _midi(letter, sharp, octave) - _A4_MIDI
    return _A4_HZ * math.pow(2.0, semitones / 12)


def _note_name(midi: int) -> str:
    # From the MIDI number, so that "b#4" is named "C5", as it sounds.
    return f"{_NAMES[midi % 12]}{midi // 12 - 1}"


def _fields(text: str, start: int, end: int) -> Iterator[tuple[int, str]]:
    """Comma-separated fields of ``text[start:end]`` as (position, stripped field)."""
    position = start
    while True:
        comma = text.find(",", position, end)
        stop = end if comma < 0 else comma
        raw = text[position:stop]
        yield position + len(raw) - len(raw.lstrip()), raw.strip()
        if comma < 0:
            return
        position = comma + 1


def _number(digits: str, position: int, token: str, what: str) -> int:
    if len(digits) > _MAX_DIGITS:
        raise RtttlError(f"{what} too large", position, token)
    return int(digits)


def _parse_defaults(text: str, start: int, end: int) -> tuple[int, int, int]:
    values = {"d": DEFAULT_DURATION, "o": DEFAULT_OCTAVE, "b": DEFAULT_BPM}
    seen: set[str] = set()
    if not text[start:end].strip():
        return values["d"], values["o"], values["b"]
    for position, field in _fields(text, start, end):
        match = _DEFAULT.fullmatch(field)
        if match is None:
            raise RtttlError("expected d=, o= or b= with a number", position, field)
        key = match["key"].lower()
        if key not in values:
            raise RtttlError("unknown default", position, field)
        if key in seen:
            raise RtttlError("default given twice", position, field)
        seen.add(key)
        value = _number(match["value"], position, field, "value")
        if key == "d" and value not in DURATIONS:
            raise RtttlError("duration must be 1, 2, 4, 8, 16 or 32", position, field)
        if key == "o" and not MIN_OCTAVE <= value <= MAX_OCTAVE:
            raise RtttlError(f"octave must be {MIN_OCTAVE} to {MAX_OCTAVE}", position, field)
        if key == "b" and not 1 <= value <= MAX_BPM:
            raise RtttlError(f"beats per minute must be 1 to {MAX_BPM}", position, field)
        values[key] = value
    return values["d"], values["o"], values["b"]


def _parse_note(field: str, position: int, duration: int, octave: int, bpm: int) -> Note:
    match = _NOTE.fullmatch(field)
    if match is None:
        reason = "empty note" if not field else "expected [duration]letter[#][octave][.]"
        raise RtttlError(reason, position, field)
    if match["duration"] is not None:
        duration = _number(match["duration"], position, field, "duration")
        if duration not in DURATIONS:
            raise RtttlError("duration must be 1, 2, 4, 8, 16 or 32", position, field)
    if match["octave"] is not None:
        octave = _number(match["octave"], position, field, "octave")
        if not MIN_OCTAVE <= octave <= MAX_OCTAVE:
            raise RtttlError(f"octave must be {MIN_OCTAVE} to {MAX_OCTAVE}", position, field)
    if match["dot1"] and match["dot2"]:
        raise RtttlError("a note takes one dot at most", position, field)
    dotted = bool(match["dot1"] or match["dot2"])
    # A whole note lasts four beats.
    seconds = 4 * 60 / bpm / duration * (1.5 if dotted else 1.0)
    letter = match["letter"].lower()
    if letter == "p":
        if match["sharp"]:
            raise RtttlError("a rest cannot be sharp", position, field)
        return Note(None, seconds, None)
    sharp = bool(match["sharp"])
    return Note(
        note_frequency(letter, sharp, octave), seconds, _note_name(_midi(letter, sharp, octave))
    )


def parse(text: str) -> Tune:
    """Parse one RTTTL tune.

    :raises RtttlError: for any malformed text, naming the position and the bad token.
    """
    first = text.find(":")
    second = text.find(":", first + 1) if first >= 0 else -1
    if second < 0:
        raise RtttlError("expected name:defaults:notes", 0, text[:40])
    duration, octave, bpm = _parse_defaults(text, first + 1, second)
    if not text[second + 1 :].strip():
        raise RtttlError("no notes", second + 1, text[second + 1 :])
    notes = tuple(
        _parse_note(field, position, duration, octave, bpm)
        for position, field in _fields(text, second + 1, len(text))
    )
    return Tune(text[:first].strip(), notes)
