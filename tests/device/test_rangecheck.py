"""The range check's verdict and gain advice, from its rules (arbiter/device/rangecheck.py):
a cross-read or a read at the top height lowers the gain one RC522 step, a slot that
never reads or reads only touching raises it; passing needs no cross-read and a seated read."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from arbiter.device.rangecheck import HEIGHTS_MM, judge, run_steps
from arbiter.rules.verdict import Role

A, D = Role.ATTACKER, Role.DEFENDER
Sample = Callable[[Role, int], frozenset[Role]]


def reads_below(own: int, cross: int | None = None) -> Sample:
    """Each sticker reads in its slot at ``own`` mm and below, in the other at ``cross``."""
    def sample(over: Role, height: int) -> frozenset[Role]:
        other = D if over is A else A
        got = {over} if height <= own else set()
        if cross is not None and height <= cross:
            got.add(other)
        return frozenset(got)
    return sample


def test_a_slot_that_never_reads_is_tried_at_every_height_top_first() -> None:
    asked: list[tuple[Role, int]] = []

    def sample(over: Role, height: int) -> frozenset[Role]:
        asked.append((over, height))
        return frozenset()

    run_steps(sample)
    assert asked == [(A, h) for h in HEIGHTS_MM] + [(D, h) for h in HEIGHTS_MM]
    assert list(HEIGHTS_MM) == sorted(HEIGHTS_MM, reverse=True) and HEIGHTS_MM[-1] == 0


@pytest.mark.parametrize("own", [50, 27, 5, 0])
def test_once_a_slot_reads_only_the_seated_sticker_is_left(own: int) -> None:
    asked: list[tuple[Role, int]] = []
    sample = reads_below(own)

    def recorded(over: Role, height: int) -> frozenset[Role]:
        asked.append((over, height))
        return sample(over, height)

    run_steps(recorded)
    first = max(h for h in HEIGHTS_MM if h <= own)
    per_slot = [h for h in HEIGHTS_MM if h >= first] + ([0] if first else [])
    assert asked == [(A, h) for h in per_slot] + [(D, h) for h in per_slot]


def test_a_healthy_build_keeps_its_gain_and_passes() -> None:
    report = judge(run_steps(reads_below(27)), 33)
    assert [(s.first_read_mm, s.cross_read_mm) for s in report.slots] == [(20, None), (20, None)]
    assert report.passed and report.recommended_db == 33
    assert report.lines()[-2:] == ["gain: keep 33 dB (reader.rx_gain_db = 33)", "PASS"]
    assert report.lines()[0] == ("ATTACKER: first reads 20 mm above its floor; "
                                 "the DEFENDER slot never reads it")


@pytest.mark.parametrize(("gain", "lower"), [(48, 43), (43, 38), (38, 33), (33, 23), (23, 18)])
def test_a_cross_read_fails_and_lowers_the_gain_one_step(gain: int, lower: int) -> None:
    report = judge(run_steps(reads_below(30, cross=0)), gain)
    assert not report.passed and report.recommended_db == lower
    assert report.slots[0].cross_read_mm == 0
    assert "CROSS-READ" in report.lines()[0]
    assert f"lower it to {lower} dB" in report.advice
    assert f"gg-arbiter selftest --range --gain {lower}" in report.advice


def test_a_cross_read_at_the_lowest_gain_asks_for_distance() -> None:
    report = judge(run_steps(reads_below(10, cross=0)), 18)
    assert not report.passed and report.recommended_db == 18
    assert "further apart" in report.advice


def test_reading_at_the_top_height_lowers_but_passes() -> None:
    report = judge(run_steps(reads_below(60)), 48)
    assert report.passed and report.recommended_db == 43


@pytest.mark.parametrize("own", [0, 5])
def test_reading_only_when_touching_raises_but_passes(own: int) -> None:
    report = judge(run_steps(reads_below(own)), 33)
    assert report.passed and report.recommended_db == 38
    assert "reads only when touching" in report.advice


def test_a_slot_that_never_reads_fails_and_raises() -> None:
    def sample(over: Role, height: int) -> frozenset[Role]:
        return frozenset({A}) if over is A and height <= 20 else frozenset()

    report = judge(run_steps(sample), 33)
    assert not report.passed and report.recommended_db == 38
    assert report.slots[1].first_read_mm is None
    assert "DEFENDER: never reads its sticker" in report.lines()[1]
    assert report.lines()[-1] == "FAIL"


def test_never_reading_at_the_highest_gain_points_at_the_wiring() -> None:
    report = judge(run_steps(lambda over, h: frozenset()), 48)
    assert not report.passed and "check the board's wiring" in report.advice
