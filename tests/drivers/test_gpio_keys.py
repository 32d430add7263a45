"""GPIO key reader through gpiozero's MockFactory (drive_low = switch closed)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from arbiter.drivers.readers.base import SlotReading, SlotState
from arbiter.drivers.readers.errors import ReaderError
from arbiter.drivers.readers.gpio_keys import GpioKeyReader, gpio_key_readers
from arbiter.rules.verdict import Role
from tests.support.clock import FakeClock
from tests.support.readings import ReadingRecorder
from tests.support.waiting import wait_until

ATTACKER_PINS = [5, 6, 13, 19, 26, 16, 20]
DEFENDER_PINS = [17, 27, 22, 23, 24, 25, 12]
W_COL = "1011000"  # published code of W:COL: switches 1, 3, 4
B_FLG = "0010101"  # published code of B:FLG: switches 3, 5, 7


class Recorder(ReadingRecorder):
    """A report callback that keeps every reading and lets the test wait for one."""

    def wait_count(self, n: int) -> None:
        assert self.wait_readings(lambda rs: len(rs) >= n), f"only {self.readings}"


def _present(slot: Role, token: str) -> SlotReading:
    return SlotReading(slot, SlotState.PRESENT, token)


def _empty(slot: Role) -> SlotReading:
    return SlotReading(slot, SlotState.EMPTY)


def _seat(factory: Any, pins: list[int], word: str) -> None:
    for pin, bit in zip(pins, word, strict=True):
        if bit == "1":
            factory.pin(pin).drive_low()
        else:
            factory.pin(pin).drive_high()


@pytest.fixture
def reader(mock_factory: Any) -> Iterator[GpioKeyReader]:
    r = GpioKeyReader(Role.ATTACKER, ATTACKER_PINS, pin_factory=mock_factory)
    try:
        yield r
    finally:
        r.close()


def test_gpio_key_reader_empty_slot_reports_empty_at_start(reader: GpioKeyReader) -> None:
    rec = Recorder()
    reader.start(rec)
    rec.wait_count(1)
    assert rec.snapshot() == [_empty(Role.ATTACKER)]
    assert reader.slots == (Role.ATTACKER,)


def test_gpio_key_reader_seated_key_reports_its_codeword(
    reader: GpioKeyReader, mock_factory: Any
) -> None:
    rec = Recorder()
    reader.start(rec)
    rec.wait_count(1)
    _seat(mock_factory, ATTACKER_PINS, W_COL)
    rec.wait_count(2)
    assert rec.snapshot()[1] == _present(Role.ATTACKER, W_COL)


def test_gpio_key_reader_removed_key_reports_empty(
    reader: GpioKeyReader, mock_factory: Any
) -> None:
    rec = Recorder()
    reader.start(rec)
    _seat(mock_factory, ATTACKER_PINS, W_COL)
    assert rec.wait_readings(lambda rs: _present(Role.ATTACKER, W_COL) in rs)
    _seat(mock_factory, ATTACKER_PINS, "0000000")
    assert rec.wait_readings(lambda rs: rs[-1] == _empty(Role.ATTACKER))


def test_gpio_key_reader_bounce_reports_only_the_final_piece(mock_factory: Any) -> None:
    # A wide window, so a stalled test thread cannot make a transient look settled.
    reader = GpioKeyReader(Role.ATTACKER, ATTACKER_PINS, window=0.25, pin_factory=mock_factory)
    try:
        rec = Recorder()
        reader.start(rec)
        rec.wait_count(1)
        # Switches 3, 5 and 7 of B:FLG chatter as the key goes in, once even
        # flashing W:COL's pattern, then the key holds.
        chatter = ["0010000", "0000100", "0010100", W_COL, "0000001", "0010101", "0000101"]
        for _ in range(10):
            for word in chatter:
                _seat(mock_factory, ATTACKER_PINS, word)
        _seat(mock_factory, ATTACKER_PINS, B_FLG)
        assert rec.wait_readings(lambda rs: _present(Role.ATTACKER, B_FLG) in rs)
        # Taking the key out is reported after everything the chatter could still cause.
        _seat(mock_factory, ATTACKER_PINS, "0000000")
        assert rec.wait_readings(lambda rs: rs[-1] == _empty(Role.ATTACKER))
        presents = [r for r in rec.snapshot() if r.state is SlotState.PRESENT]
        assert presents == [_present(Role.ATTACKER, B_FLG)]
    finally:
        reader.close()


def test_gpio_key_reader_half_seated_key_reports_invalid_after_a_second(
    mock_factory: Any,
) -> None:
    clock = FakeClock()
    reader = GpioKeyReader(Role.ATTACKER, ATTACKER_PINS, pin_factory=mock_factory, clock=clock)
    try:
        rec = Recorder(clock)
        reader.start(rec)
        clock.advance(0.03)  # the debounce window
        rec.wait_count(1)
        half = "1010000"  # W:COL without switch 4
        _seat(mock_factory, ATTACKER_PINS, half)
        clock.advance(0.99)
        # Pushed home just before a second: the half-seated spell is judged as of now
        # (INVALID would come first), then the key settles.
        _seat(mock_factory, ATTACKER_PINS, W_COL)
        clock.advance(0.03)
        assert rec.wait_readings(lambda rs: _present(Role.ATTACKER, W_COL) in rs)
        assert rec.snapshot() == [_empty(Role.ATTACKER), _present(Role.ATTACKER, W_COL)]
        _seat(mock_factory, ATTACKER_PINS, half)  # slides out half way and stays
        pressed_at = clock()
        clock.advance(1.0)
        assert rec.wait_readings(lambda rs: len(rs) >= 3)
        readings = rec.snapshot()
        assert readings[2].state is SlotState.INVALID
        assert readings[2].token is None
        assert rec.times[2] - pressed_at >= 1.0  # never earlier than invalid_after
        assert readings[3:] == []
    finally:
        reader.close()


def test_gpio_key_reader_key_seated_before_start_is_reported(
    reader: GpioKeyReader, mock_factory: Any
) -> None:
    _seat(mock_factory, ATTACKER_PINS, W_COL)
    rec = Recorder()
    reader.start(rec)
    rec.wait_count(1)
    assert rec.snapshot()[0] == _present(Role.ATTACKER, W_COL)


def test_gpio_key_reader_pin_order_is_switch_order(mock_factory: Any) -> None:
    reversed_pins = list(reversed(ATTACKER_PINS))
    with_reversed = GpioKeyReader(Role.DEFENDER, reversed_pins, pin_factory=mock_factory)
    try:
        _seat(mock_factory, ATTACKER_PINS, W_COL)  # pins of switches 1,3,4 in the forward order
        rec = Recorder()
        with_reversed.start(rec)
        rec.wait_count(1)
        assert rec.snapshot()[0] == _present(Role.DEFENDER, W_COL[::-1])
    finally:
        with_reversed.close()


def test_gpio_key_readers_builds_both_slots(mock_factory: Any) -> None:
    readers = gpio_key_readers(ATTACKER_PINS, DEFENDER_PINS, pin_factory=mock_factory)
    try:
        assert [r.slots for r in readers] == [(Role.ATTACKER,), (Role.DEFENDER,)]
        rec = Recorder()
        for r in readers:
            r.start(rec)
        rec.wait_count(2)
        _seat(mock_factory, DEFENDER_PINS, B_FLG)
        assert rec.wait_readings(lambda rs: _present(Role.DEFENDER, B_FLG) in rs)
        assert _present(Role.ATTACKER, B_FLG) not in rec.snapshot()
    finally:
        for r in readers:
            r.close()


@pytest.mark.parametrize(
    "pins",
    [ATTACKER_PINS[:6], [*ATTACKER_PINS, 21], [5, 5, 13, 19, 26, 16, 20]],
    ids=["six", "eight", "repeated"],
)
def test_gpio_key_reader_bad_pin_list_raises(mock_factory: Any, pins: list[int]) -> None:
    with pytest.raises(ReaderError):
        GpioKeyReader(Role.ATTACKER, pins, pin_factory=mock_factory)


def test_gpio_key_readers_shared_pin_raises(mock_factory: Any) -> None:
    with pytest.raises(ReaderError):
        gpio_key_readers(ATTACKER_PINS, [*DEFENDER_PINS[:6], ATTACKER_PINS[0]],
                         pin_factory=mock_factory)  # fmt: skip


def test_gpio_key_reader_pin_in_use_raises_and_frees_the_rest(mock_factory: Any) -> None:
    from gpiozero import DigitalInputDevice

    holder = DigitalInputDevice(ATTACKER_PINS[3], pin_factory=mock_factory)
    try:
        with pytest.raises(ReaderError):
            GpioKeyReader(Role.ATTACKER, ATTACKER_PINS, pin_factory=mock_factory)
    finally:
        holder.close()
    GpioKeyReader(Role.ATTACKER, ATTACKER_PINS, pin_factory=mock_factory).close()


def test_gpio_key_reader_close_is_idempotent_and_stops_reports(mock_factory: Any) -> None:
    r = GpioKeyReader(Role.ATTACKER, ATTACKER_PINS, pin_factory=mock_factory)
    rec = Recorder()
    r.start(rec)
    rec.wait_count(1)
    r.close()
    r.close()
    again = GpioKeyReader(Role.ATTACKER, ATTACKER_PINS, pin_factory=mock_factory)  # pins freed
    again.close()
    assert rec.snapshot() == [_empty(Role.ATTACKER)]
    with pytest.raises(ReaderError):
        r.start(rec)


def test_gpio_key_reader_survives_a_failing_callback(
    reader: GpioKeyReader, mock_factory: Any
) -> None:
    rec = Recorder()
    calls = []

    def flaky(reading: SlotReading) -> None:
        calls.append(reading)
        if len(calls) == 1:
            raise RuntimeError("consumer bug")
        rec(reading)

    reader.start(flaky)
    wait_until(lambda: len(calls) >= 1)
    _seat(mock_factory, ATTACKER_PINS, W_COL)
    rec.wait_count(1)
    assert rec.snapshot() == [_present(Role.ATTACKER, W_COL)]


def test_gpio_key_reader_import_needs_no_gpiozero() -> None:
    code = (
        "import sys, arbiter.drivers.readers.gpio_keys, arbiter.drivers.readers.mcp23017\n"
        "assert 'gpiozero' not in sys.modules and 'smbus2' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
