"""The debouncer: raw switch patterns in, settled slot readings out (fake clock)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arbiter.drivers.readers.base import SlotReading, SlotState
from arbiter.drivers.readers.debounce import INVALID_DETAIL, Debouncer
from arbiter.drivers.readers.errors import ReaderError
from arbiter.rules.keycode import DEFAULT_KEYCODE
from arbiter.rules.ranks import Rank
from arbiter.rules.verdict import Role

WINDOW = 0.03
INVALID_AFTER = 1.0
EMPTY = "0000000"
SLOT = Role.ATTACKER
TABLE_WORDS = [word for _, word in DEFAULT_KEYCODE.table()]
ALL_PATTERNS = ["".join(bits) for bits in itertools.product("01", repeat=7)]


def _is_codeword(bits: str) -> bool:
    return bits.count("1") == 3  # the spec: 3 of 7 switches closed


def _present(token: str) -> SlotReading:
    return SlotReading(SLOT, SlotState.PRESENT, token)


def _new() -> Debouncer:
    return Debouncer(SLOT, window=WINDOW, invalid_after=INVALID_AFTER)


def _run(
    deb: Debouncer, changes: list[tuple[float, str]], until: float
) -> list[tuple[float, SlotReading]]:
    """Drive ``deb`` as a reader thread would: poll at each deadline, feed each change."""
    return [(when, reading) for when, _, _, reading in _trace(deb, changes, until)]


def _trace(
    deb: Debouncer, changes: list[tuple[float, str]], until: float
) -> list[tuple[float, str | None, float, SlotReading]]:
    """As :func:`_run`, with the raw pattern and the time it began at each reading."""
    out: list[tuple[float, str | None, float, SlotReading]] = []
    raw: str | None = None
    since = 0.0

    def poll_until(t: float) -> None:
        for _ in range(1000):
            due = deb.deadline()
            if due is None or due > t:
                return
            got = deb.poll(due)
            assert got, f"poll at deadline {due} reported nothing"
            out.extend((due, raw, since, r) for r in got)
        raise AssertionError("debouncer deadline never advanced")

    for at, bits in changes:
        poll_until(at)
        if bits != raw:
            raw, since = bits, at
        out.extend((at, raw, since, r) for r in deb.feed(bits, at))
    poll_until(until)
    return out


def _settled(deb: Debouncer, bits: str, at: float = 0.0) -> float:
    """Feed ``bits`` and let it settle; returns the time after settling."""
    _run(deb, [(at, bits)], at + INVALID_AFTER + 1)
    return at + INVALID_AFTER + 1


def test_debouncer_empty_slot_reports_empty_after_window() -> None:
    deb = _new()
    assert deb.feed(EMPTY, 10.0) == []
    assert deb.poll(10.0 + WINDOW * 0.9) == []
    assert deb.poll(10.0 + WINDOW) == [SlotReading(SLOT, SlotState.EMPTY)]


def test_debouncer_codeword_reports_present_with_its_token() -> None:
    deb = _new()
    deb.feed("1011000", 0.0)
    assert deb.poll(WINDOW * 0.5) == []
    assert deb.poll(WINDOW * 1.5) == [_present("1011000")]


def test_debouncer_unused_codeword_is_present_not_a_default() -> None:
    deb = _new()
    deb.feed("0000111", 0.0)
    assert deb.poll(1.0) == [_present("0000111")]


def test_debouncer_pattern_changed_within_window_never_counts() -> None:
    deb = _new()
    _settled(deb, EMPTY)
    out = _run(deb, [(5.0, "1110000"), (5.0 + WINDOW / 2, "1101000")], 6.0)
    assert [r for _, r in out] == [_present("1101000")]


def test_debouncer_half_seated_key_reports_invalid_only_after_invalid_after() -> None:
    deb = _new()
    t = _settled(deb, EMPTY)
    assert deb.feed("1100000", t) == []
    assert deb.poll(t + 0.5) == []
    assert deb.poll(t + INVALID_AFTER * 0.99) == []
    got = deb.poll(t + INVALID_AFTER)
    assert got == [SlotReading(SLOT, SlotState.INVALID, None, INVALID_DETAIL)]
    assert deb.poll(t + 5.0) == []  # reported once


def test_debouncer_invalid_detail_never_names_a_rank() -> None:
    detail = INVALID_DETAIL.lower()
    for rank in Rank:
        assert rank.code.lower() not in detail
        assert rank.full_name.lower() not in detail


def test_debouncer_unreadable_from_start_reports_invalid() -> None:
    deb = _new()
    deb.feed("1111000", 0.0)
    assert deb.poll(0.5) == []
    assert [r.state for r in deb.poll(INVALID_AFTER)] == [SlotState.INVALID]


def test_debouncer_reports_only_changes() -> None:
    deb = _new()
    _settled(deb, "1110000")
    bounce = [(10.0, "1100000"), (10.005, "1110000"), (10.01, "0110000"), (10.012, "1110000")]
    assert _run(deb, bounce, 20.0) == []


def test_debouncer_removal_reports_empty() -> None:
    deb = _new()
    _settled(deb, "1110000")
    out = _run(deb, [(10.0, "0110000"), (10.01, "0010000"), (10.02, EMPTY)], 20.0)
    assert [r for _, r in out] == [SlotReading(SLOT, SlotState.EMPTY)]


def test_debouncer_deadline_follows_the_pending_change() -> None:
    deb = _new()
    assert deb.deadline() is None
    deb.feed("1110000", 2.0)
    assert deb.deadline() == pytest.approx(2.0 + WINDOW)
    deb.poll(3.0)
    assert deb.deadline() is None
    deb.feed("1100000", 4.0)
    assert deb.deadline() == pytest.approx(4.0 + INVALID_AFTER)


def test_debouncer_fault_then_same_state_is_reported_again() -> None:
    deb = _new()
    _settled(deb, "1110000")
    fault = deb.fault("I2C expander at 0x20 not answering")
    assert fault == [SlotReading(SLOT, SlotState.FAULT, None, "I2C expander at 0x20 not answering")]
    assert deb.fault("I2C expander at 0x20 not answering") == []
    assert deb.deadline() is None
    deb.feed("1110000", 50.0)
    assert deb.poll(51.0) == [_present("1110000")]


def test_debouncer_earlier_time_is_taken_as_latest() -> None:
    deb = _new()
    deb.feed(EMPTY, 10.0)
    deb.poll(11.0)
    deb.feed("1110000", 10.5)  # stale timestamp: counts as 11.0
    assert deb.poll(11.0 + WINDOW * 0.5) == []
    assert deb.poll(11.0 + WINDOW) == [_present("1110000")]


@pytest.mark.parametrize(("window", "invalid_after"), [(-0.01, 1.0), (0.03, 0.0), (0.03, -1.0)])
def test_debouncer_bad_timing_raises_reader_error(window: float, invalid_after: float) -> None:
    with pytest.raises(ReaderError):
        Debouncer(SLOT, window=window, invalid_after=invalid_after)


@pytest.mark.parametrize("bits", ["", "111000", "11100000", "11x0000"])
def test_debouncer_malformed_pattern_raises_value_error(bits: str) -> None:
    with pytest.raises(ValueError):
        _new().feed(bits, 0.0)


# --- properties --------------------------------------------------------------

_sub_window = st.floats(min_value=0.0, max_value=WINDOW * 0.9)


@given(
    start=st.sampled_from([EMPTY, *TABLE_WORDS]),
    final=st.sampled_from(TABLE_WORDS),
    bounce=st.lists(st.tuples(st.sampled_from(ALL_PATTERNS), _sub_window), max_size=60),
)
def test_debouncer_bounce_ending_in_codeword_reports_only_that_codeword(
    start: str, final: str, bounce: list[tuple[str, float]]
) -> None:
    deb = _new()
    t = _settled(deb, start)
    changes: list[tuple[float, str]] = []
    for bits, dt in bounce:
        if changes and changes[-1][1] == bits:
            continue  # a repeat would extend the previous pattern's hold
        changes.append((t, bits))
        t += dt  # every intermediate pattern lasts less than one window
    changes.append((t, final))
    out = _run(deb, changes, t + WINDOW * 2)
    presents = [r.token for _, r in out if r.state is SlotState.PRESENT]
    assert set(presents) <= {final}
    assert deb.reported == _present(final)


@given(
    final=st.sampled_from(TABLE_WORDS),
    steps=st.lists(
        st.tuples(
            st.lists(st.integers(0, 2), min_size=0, max_size=2, unique=True),
            st.floats(min_value=0.0, max_value=INVALID_AFTER * 0.99),
        ),
        max_size=12,
    ),
)
def test_debouncer_partial_insertions_never_report_another_piece(
    final: str, steps: list[tuple[list[int], float]]
) -> None:
    pressed = [i for i, c in enumerate(final) if c == "1"]
    deb = _new()
    t = _settled(deb, EMPTY)
    changes = []
    for chosen, hold in steps:
        keep = {pressed[i] for i in chosen}  # a proper subset of the key's switches
        changes.append((t, "".join("1" if i in keep else "0" for i in range(7))))
        t += hold
    changes.append((t, final))
    out = _run(deb, changes, t + WINDOW * 2)
    for _, reading in out:
        assert reading.state is not SlotState.PRESENT or reading.token == final
        assert reading.state is not SlotState.FAULT
    assert deb.reported == _present(final)


@given(
    st.lists(
        st.tuples(
            st.sampled_from(ALL_PATTERNS),
            st.floats(min_value=0.0, max_value=INVALID_AFTER * 1.5),
        ),
        min_size=1,
        max_size=25,
    )
)
def test_debouncer_readings_match_the_raw_signal(steps: list[tuple[str, float]]) -> None:
    """Each PRESENT/EMPTY was held a full window before it; INVALID only on a bad pattern;
    consecutive readings always differ."""
    deb = _new()
    changes, t = [], 0.0
    for pattern, hold in steps:
        changes.append((t, pattern))
        t += hold
    previous = None
    for when, bits, since, reading in _trace(deb, changes, t + INVALID_AFTER * 2):
        assert bits is not None
        assert reading != previous
        previous = reading
        if reading.state is SlotState.PRESENT:
            assert reading.token == bits and _is_codeword(bits)
            assert when >= since + WINDOW
        elif reading.state is SlotState.EMPTY:
            assert bits == EMPTY and when >= since + WINDOW
        else:
            assert reading.state is SlotState.INVALID
            assert bits != EMPTY and not _is_codeword(bits)
            assert reading.token is None and reading.detail == INVALID_DETAIL


@given(
    st.lists(
        st.tuples(
            st.sampled_from(ALL_PATTERNS),
            st.floats(min_value=0.0, max_value=INVALID_AFTER * 1.5),
        ),
        min_size=1,
        max_size=25,
    )
)
def test_debouncer_result_does_not_depend_on_poll_schedule(steps: list[tuple[str, float]]) -> None:
    changes, t = [], 0.0
    for bits, hold in steps:
        changes.append((t, bits))
        t += hold
    polled = [r for _, r in _run(_new(), changes, t + 5.0)]
    lazy = _new()
    unpolled = []
    for at, bits in changes:
        unpolled += lazy.feed(bits, at)
    unpolled += lazy.poll(t + 5.0)
    assert unpolled == polled
