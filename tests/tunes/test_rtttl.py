"""RTTTL parser: expectations come from the RTTTL format and HARDWARE-NOTES.md."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arbiter.tunes.errors import RtttlError
from arbiter.tunes.rtttl import Tune, note_frequency, parse

# Copied from HARDWARE-NOTES.md, "Tunes".
TAPS = (
    "Taps:d=4,o=5,b=63:8g4.,16g4,2c,8g4.,16c,2e,8g4,8c,e,8g4,8c,e,8g4,8c,2e,8c.,16e,2g,"
    "8e.,16c,2g4,8g4.,16g4,1c"
)
TAPS_GROUPS = "G G C | G C E | G C E | G C E | G C E | C E G | E C G | G G C"
# Frequencies given in the brief, in Hz.
HZ = {"G4": 392.00, "C5": 523.25, "E5": 659.26, "G5": 783.99}

# Published equal-tempered frequencies of octave 4 (A4 = 440 Hz), to check against.
OCTAVE_4 = {
    "c": 261.6256,
    "c#": 277.1826,
    "d": 293.6648,
    "d#": 311.1270,
    "e": 329.6276,
    "f": 349.2282,
    "f#": 369.9944,
    "g": 391.9954,
    "g#": 415.3047,
    "a": 440.0000,
    "a#": 466.1638,
    "b": 493.8833,
}


def _pitch_name(frequency: float | None) -> str:
    assert frequency is not None
    matches = [name for name, hz in HZ.items() if abs(frequency - hz) <= 0.5]
    assert len(matches) == 1, frequency
    return matches[0]


def test_parse_taps_has_24_notes() -> None:
    tune = parse(TAPS)
    assert tune.name == "Taps"
    assert len(tune.notes) == 24


def test_parse_taps_pitch_groups_match_hardware_notes() -> None:
    tune = parse(TAPS)
    letters = [_pitch_name(note.frequency)[0] for note in tune.notes]
    groups = [group.split() for group in TAPS_GROUPS.split("|")]
    assert [letters[i : i + 3] for i in range(0, 24, 3)] == groups


def test_parse_taps_octaves() -> None:
    # Read off the RTTTL by hand: "g4" is G4, a bare "g" takes o=5.
    groups = [
        ["G4", "G4", "C5"],
        ["G4", "C5", "E5"],
        ["G4", "C5", "E5"],
        ["G4", "C5", "E5"],
        ["G4", "C5", "E5"],
        ["C5", "E5", "G5"],
        ["E5", "C5", "G4"],
        ["G4", "G4", "C5"],
    ]
    expected = [name for group in groups for name in group]
    tune = parse(TAPS)
    assert [_pitch_name(note.frequency) for note in tune.notes] == expected
    assert [note.name for note in tune.notes] == expected


def test_parse_taps_durations() -> None:
    beat = 60 / 63  # a quarter note at b=63
    tune = parse(TAPS)
    assert tune.notes[0].seconds == pytest.approx(beat / 2 * 1.5)  # 8g4.
    assert tune.notes[1].seconds == pytest.approx(beat / 4)  # 16g4
    assert tune.notes[2].seconds == pytest.approx(beat * 2)  # 2c
    assert tune.notes[8].seconds == pytest.approx(beat)  # e, default d=4
    assert tune.notes[15].seconds == pytest.approx(beat / 2 * 1.5)  # 8c.
    assert tune.notes[-1].seconds == pytest.approx(beat * 4)  # 1c
    assert tune.duration == pytest.approx(sum(n.seconds for n in tune.notes))


def test_parse_missing_defaults_are_rtttl_defaults() -> None:
    # d=4, o=6, b=63
    note = parse("x::c").notes[0]
    assert note.frequency == pytest.approx(OCTAVE_4["c"] * 4, rel=1e-5)
    assert note.seconds == pytest.approx(60 / 63)
    assert note.name == "C6"
    assert parse("x:b=120:c").notes[0].name == "C6"


def test_parse_defaults_in_any_order() -> None:
    assert parse("x:b=120,o=4,d=8:c,e") == parse("x:d=8,o=4,b=120:c,e")
    note = parse("x:o=4,b=120,d=8:c").notes[0]
    assert note.seconds == pytest.approx(0.25)
    assert note.frequency == pytest.approx(OCTAVE_4["c"], rel=1e-5)


def test_parse_dot_before_or_after_octave() -> None:
    before, after = parse("x:d=4,o=5,b=60:8c.6,8c6.").notes
    assert before == after
    assert before.seconds == pytest.approx(0.75)
    assert before.name == "C6"


def test_parse_sharp_note() -> None:
    note = parse("x:d=4,o=5,b=63:c#").notes[0]
    assert note.name == "C#5"
    assert note.frequency == pytest.approx(554.37, abs=0.01)


def test_parse_rest() -> None:
    rest = parse("x:d=4,o=5,b=60:8p").notes[0]
    assert rest.frequency is None
    assert rest.name is None
    assert rest.is_rest
    assert rest.seconds == pytest.approx(0.5)


def test_parse_whitespace_tolerated() -> None:
    spaced = parse(" Taps : d = 4 , o = 5 , b = 63 :\n 8g4. , 16g4 ,\t2c \n")
    assert spaced.name == "Taps"
    assert spaced.notes == parse(TAPS).notes[:3]


def test_parse_case_insensitive() -> None:
    assert parse("X:D=8,O=4,B=100:C,G#,P").notes == parse("x:d=8,o=4,b=100:c,g#,p").notes


def test_parse_lenient_octaves() -> None:
    low, high = parse("x:d=4,o=5,b=63:c3,b8").notes
    assert low.frequency == pytest.approx(OCTAVE_4["c"] / 2, rel=1e-5)
    assert high.frequency == pytest.approx(OCTAVE_4["b"] * 16, rel=1e-5)


def test_parse_all_durations() -> None:
    tune = parse("x:d=4,o=5,b=60:1c,2c,4c,8c,16c,32c")
    assert [n.seconds for n in tune.notes] == pytest.approx([4, 2, 1, 0.5, 0.25, 0.125])


@pytest.mark.parametrize(
    ("text", "position", "token"),
    [
        ("x:d=4,o=5,b=63:c,8x,e", 17, "8x"),
        ("x:d=4,o=5,b=63:c, 64c", 18, "64c"),
        ("x:d=4,o=9,b=63:c", 6, "o=9"),
        ("x:d=4,q=5:c", 6, "q=5"),
        ("x:d=4, d=8:c", 7, "d=8"),
        ("x:d=3:c", 2, "d=3"),
        ("x:b=0:c", 2, "b=0"),
        ("x::c,,e", 5, ""),
        ("x::c2", 3, "c2"),
        ("x::p#", 3, "p#"),
        ("x::c.5.", 3, "c.5."),
    ],
)
def test_parse_error_names_position_and_token(text: str, position: int, token: str) -> None:
    with pytest.raises(RtttlError) as caught:
        parse(text)
    assert caught.value.position == position
    assert caught.value.token == token
    assert str(position) in str(caught.value)
    assert repr(token) in str(caught.value)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "no colons",
        "x:d=4",
        "x::",
        "x:: , ",
        "x::c,",
        "x::h",
        "x::c##",
        "x::c..",
        "x::c:d",
        "x:d=:c",
        "x:d:c",
        "x::8 c",
        "x::" + "9" * 5000 + "c",
        "x:b=" + "9" * 5000 + ":c",
        "x:d=4²:c",
        "x::c٣",
        "x:b=901:c",
        "x:o=2:c",
        "x::c9",
        "x::3c",
    ],
)
def test_parse_rejects_malformed(text: str) -> None:
    with pytest.raises(RtttlError):
        parse(text)


def test_rtttl_error_is_value_error() -> None:
    assert issubclass(RtttlError, ValueError)


def test_note_frequency_equal_tempered_from_a4() -> None:
    assert note_frequency("a", False, 4) == pytest.approx(440.0)
    assert note_frequency("A", False, 5) == pytest.approx(880.0)
    assert note_frequency("c", False, 4) == pytest.approx(OCTAVE_4["c"], rel=1e-5)
    assert note_frequency("f", True, 4) == pytest.approx(OCTAVE_4["f#"], rel=1e-5)


_RTTTL_ALPHABET = "abcdefghpABCDEFGP#.0123456789:,=dob \t\n-²"


@settings(max_examples=400)
@given(st.one_of(st.text(), st.text(alphabet=_RTTTL_ALPHABET)))
def test_parse_arbitrary_text_raises_only_rtttl_error(text: str) -> None:
    try:
        tune = parse(text)
    except RtttlError:
        return
    assert isinstance(tune, Tune)
    assert tune.notes


_LETTERS = sorted(OCTAVE_4)
_notes = st.tuples(
    st.sampled_from([None, 1, 2, 4, 8, 16, 32]),  # duration
    st.sampled_from([*_LETTERS, "p"]),  # letter, maybe sharp
    st.sampled_from([None, 4, 5, 6, 7]),  # octave
    st.sampled_from([None, "before", "after"]),  # dot
)
_defaults = st.fixed_dictionaries(
    {},
    optional={
        "d": st.sampled_from([1, 2, 4, 8, 16, 32]),
        "o": st.integers(4, 7),
        "b": st.integers(25, 900),
    },
)


@given(_defaults, st.lists(_notes, min_size=1, max_size=12), st.randoms())
def test_parse_generated_tunes_round_trip(
    defaults: dict[str, int],
    notes: list[tuple[int | None, str, int | None, str | None]],
    rnd: random.Random,
) -> None:
    keys = list(defaults)
    rnd.shuffle(keys)
    header = ",".join(f"{key}={defaults[key]}" for key in keys)
    tokens = []
    for duration, letter, octave, dot in notes:
        token = "" if duration is None else str(duration)
        token += letter
        token += "." if dot == "before" else ""
        token += "" if octave is None else str(octave)
        token += "." if dot == "after" else ""
        tokens.append(token)
    tune = parse(f"gen:{header}:{','.join(tokens)}")

    bpm = defaults.get("b", 63)
    assert len(tune.notes) == len(notes)
    for parsed, (duration, letter, octave, dot) in zip(tune.notes, notes, strict=True):
        whole = 4 * 60 / bpm
        seconds = whole / (duration or defaults.get("d", 4)) * (1.5 if dot else 1.0)
        assert parsed.seconds == pytest.approx(seconds)
        if letter == "p":
            assert parsed.frequency is None
        else:
            octave = octave if octave is not None else defaults.get("o", 6)
            expected = OCTAVE_4[letter] * 2 ** (octave - 4)
            assert parsed.frequency == pytest.approx(expected, rel=1e-5)
            assert parsed.name == f"{letter.upper()}{octave}"
    assert tune.duration == pytest.approx(sum(n.seconds for n in tune.notes))
