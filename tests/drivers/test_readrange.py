"""The simulator's read-range model, against the facts it is built from
(HARDWARE-NOTES: NTAG213 on a common RC522 reads at about 20-40 mm on axis at 33 dB)."""

from __future__ import annotations

import os
import select

import pytest

from arbiter.drivers.fakes import FakePico
from arbiter.drivers.readrange import ReadRangeModel
from tests.support.waiting import wait_until


def test_reach_at_the_reset_gain_is_within_the_measured_20_to_40_mm() -> None:
    model = ReadRangeModel()
    assert 20 <= model.reach_mm(33) <= 40
    assert model.reads(33, 15) and not model.reads(33, 40)


def test_more_gain_reaches_further_up_to_the_power_limit() -> None:
    model = ReadRangeModel()
    reaches = [model.reach_mm(g) for g in (18, 23, 33, 38, 43, 48)]
    assert reaches == sorted(reaches)
    # cube law: 20 dB more amplitude is 10 ** (20 / 60) = 2.15 times the reach
    assert model.reach_mm(38) / model.reach_mm(18) == pytest.approx(10 ** (20 / 60))
    assert model.reach_mm(48) == 45.0  # the field no longer powers the tag beyond


def test_a_seated_sticker_reads_at_every_gain_and_never_in_the_other_slot() -> None:
    model = ReadRangeModel()  # the flagship's 92 mm between antennas
    for gain in (18, 23, 33, 38, 43, 48):
        assert model.reads(gain, 0)
        assert not model.reads(gain, 0, other_slot=True)


def test_slots_close_together_cross_read_at_high_gain_only() -> None:
    model = ReadRangeModel(spacing_mm=40)
    assert model.reads(48, 0, other_slot=True)
    assert not model.reads(33, 0, other_slot=True)


def test_fake_pico_reads_placed_stickers_as_the_model_says() -> None:
    pico = FakePico(model=ReadRangeModel(spacing_mm=40))
    try:
        pico.place("A", "04A1B2C3D48E80", 50)
        assert pico.state == {"A": None, "D": None}
        pico.lift("A", 10)
        assert pico.state == {"A": "04A1B2C3D48E80", "D": None}
        pico.gain_db = 48
        pico.place("D", "04000000000001", 0)  # each slot now hears both: collisions
        assert pico.state == {"A": None, "D": None}
        pico.place("A", None)
        assert pico.state == {"A": "04000000000001", "D": "04000000000001"}
    finally:
        pico.unplug()


def test_fake_pico_answers_gain_lines_like_the_firmware() -> None:
    pico = FakePico()
    try:
        os.write(pico.slave, b"GAIN 3")
        os.write(pico.slave, b"8\nGAIN 30\n")
        wait_until(lambda: pico.gain_db == 38)
        got = b""

        def more() -> bool:
            nonlocal got
            if select.select([pico.slave], [], [], 0.05)[0]:  # the reader's side of the pty
                got += os.read(pico.slave, 256)
            return b"not one of" in got

        wait_until(more)
        assert b"GAIN 38*" in got and b"ERR GAIN 30: not one of 18 23 33 38 43 48*" in got
        assert pico.gain_db == 38
    finally:
        pico.unplug()
