"""The RDM6300 frame parser and encoder, without a port."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arbiter.drivers.readers.rdm6300 import FrameParser, checksum, encode_frame

# (data, checksum) as published for the RDM6300.
PUBLISHED = [
    ("62E3086CED", "08"),
    ("100086F444", "26"),
    ("01000734E0", "D2"),
    ("1F00644BB6", "86"),
]
TAGS = [tag for tag, _ in PUBLISHED]

_FRAME_RE = re.compile(rb"\x02([0-9A-Fa-f]{10})([0-9A-Fa-f]{2})\x03")


def reference_tags(data: bytes) -> list[str]:
    """Every valid frame in ``data``, found by a regular expression."""
    found = []
    for match in _FRAME_RE.finditer(data):
        tag = match.group(1).decode().upper()
        if int(match.group(2), 16) == _xor(bytes.fromhex(tag)):
            found.append(tag)
    return found


def _xor(data: bytes) -> int:
    value = 0
    for byte in data:
        value ^= byte
    return value


@pytest.mark.parametrize(("tag", "published"), PUBLISHED)
def test_checksum_matches_published_examples(tag: str, published: str) -> None:
    assert checksum(tag) == published


@pytest.mark.parametrize(("tag", "published"), PUBLISHED)
def test_encode_frame_builds_the_published_frame(tag: str, published: str) -> None:
    assert encode_frame(tag) == b"\x02" + f"{tag}{published}".encode() + b"\x03"
    assert len(encode_frame(tag)) == 14


def test_encode_frame_rejects_wrong_length() -> None:
    with pytest.raises(ValueError):
        encode_frame("62E3086C")


@pytest.mark.parametrize("tag", TAGS)
def test_parser_reads_published_frame(tag: str) -> None:
    parser = FrameParser()
    assert parser.feed(encode_frame(tag)) == [tag]
    assert parser.frames == 1
    assert parser.bad_checksums == 0


def test_parser_reads_frame_fed_byte_by_byte() -> None:
    parser = FrameParser()
    found: list[str] = []
    for byte in encode_frame("62E3086CED"):
        found += parser.feed(bytes([byte]))
    assert found == ["62E3086CED"]


def test_parser_reads_repeated_frames() -> None:
    parser = FrameParser()
    assert parser.feed(encode_frame("100086F444") * 3) == ["100086F444"] * 3


def test_parser_accepts_lowercase_hex_and_reports_upper_case() -> None:
    parser = FrameParser()
    assert parser.feed(b"\x0262e3086ced08\x03") == ["62E3086CED"]
    assert parser.feed(b"\x021f00644bb6\x38\x36\x03") == ["1F00644BB6"]


def test_parser_drops_and_counts_bad_checksum() -> None:
    parser = FrameParser()
    assert parser.feed(b"\x0262E3086CED09\x03") == []
    assert parser.bad_checksums == 1
    assert parser.feed(encode_frame("62E3086CED")) == ["62E3086CED"]


def test_parser_drops_a_frame_with_one_changed_data_digit() -> None:
    parser = FrameParser()
    assert parser.feed(b"\x0262E3086CEC08\x03") == []
    assert parser.bad_checksums == 1


def test_parser_resyncs_after_garbage() -> None:
    parser = FrameParser()
    data = b"\xff\x00hello\x03\x02AB" + encode_frame("01000734E0") + b"\x02\x02\x03"
    assert parser.feed(data) == ["01000734E0"]
    assert parser.malformed >= 1


def test_parser_rejects_truncated_frame_followed_by_etx() -> None:
    parser = FrameParser()
    assert parser.feed(b"\x0262E3086CED\x03") == []
    assert parser.feed(b"\x0262E3086CED0\x03") == []
    assert parser.frames == 0


def test_parser_rejects_frame_with_extra_digit() -> None:
    parser = FrameParser()
    assert parser.feed(b"\x0262E3086CED080\x03") == []


def test_parser_rejects_non_hex_inside_frame() -> None:
    parser = FrameParser()
    assert parser.feed(b"\x0262E3086CEG08\x03") == []


def test_parser_completes_a_frame_split_across_feeds() -> None:
    parser = FrameParser()
    frame = encode_frame("1F00644BB6")
    assert parser.feed(frame[:5]) == []
    assert parser.feed(frame[5:]) == ["1F00644BB6"]


def test_parser_reset_forgets_partial_frame() -> None:
    parser = FrameParser()
    frame = encode_frame("1F00644BB6")
    parser.feed(frame[:5])
    parser.reset()
    assert parser.feed(frame[5:]) == []


@settings(max_examples=300)
@given(st.binary(max_size=400))
def test_parser_random_bytes_yield_exactly_the_valid_frames(data: bytes) -> None:
    assert FrameParser().feed(data) == reference_tags(data)


@settings(max_examples=300)
@given(
    st.binary(max_size=100),
    st.binary(max_size=100),
    st.sampled_from(TAGS),
    st.booleans(),
    st.integers(min_value=1, max_value=20),
)
def test_parser_finds_valid_frame_in_garbage(
    before: bytes, after: bytes, tag: str, lower: bool, chunk: int
) -> None:
    frame = encode_frame(tag)
    if lower:
        frame = frame.lower()
    data = before + frame + after
    parser = FrameParser()
    found: list[str] = []
    for start in range(0, len(data), chunk):
        found += parser.feed(data[start : start + chunk])
    assert tag in found
    assert found == reference_tags(data)


@settings(max_examples=200)
@given(st.text(alphabet="0123456789ABCDEFabcdef", min_size=10, max_size=10))
def test_encode_frame_round_trips_any_tag(tag: str) -> None:
    assert FrameParser().feed(encode_frame(tag)) == [tag.upper()]
