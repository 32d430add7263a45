"""MCP23017 key reader against a fake SMBus that behaves like the datasheet says."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from arbiter.drivers.fakes import FakeMcp23017
from arbiter.drivers.readers.base import SlotReading, SlotState
from arbiter.drivers.readers.errors import ReaderError
from arbiter.drivers.readers.mcp23017 import Mcp23017KeyReader, open_bus
from arbiter.rules.verdict import Role
from tests.support.clock import FakeClock
from tests.support.readings import ReadingRecorder
from tests.support.waiting import wait_until

INT_PIN = 4
W_COL = "1011000"  # published code of W:COL: switches 1, 3, 4
B_FLG = "0010101"  # published code of B:FLG: switches 3, 5, 7

# Datasheet (IOCON.BANK = 0) register addresses.
IODIRA, IPOLA, GPINTENA, INTCONA, IOCON, GPPUA, GPIOA = 0x00, 0x02, 0x04, 0x08, 0x0A, 0x0C, 0x12
MIRROR, ODR = 1 << 6, 1 << 2


class Recorder(ReadingRecorder):
    def last(self, slot: Role) -> SlotReading | None:
        mine = [r for r in self.snapshot() if r.slot is slot]
        return mine[-1] if mine else None

    def wait_last(self, slot: Role, want: SlotReading) -> None:
        ok = self.wait_readings(lambda rs: [r for r in rs if r.slot is slot][-1:] == [want])
        assert ok, f"{slot}: wanted {want}, got {self.readings}"


ATTACKER = list(range(0, 7))  # GPA0..GPA6
DEFENDER = list(range(8, 15))  # GPB0..GPB6


def _present(slot: Role, token: str) -> SlotReading:
    return SlotReading(slot, SlotState.PRESENT, token)


def _empty(slot: Role) -> SlotReading:
    return SlotReading(slot, SlotState.EMPTY)


def _fault(slot: Role, address: int = 0x20) -> SlotReading:
    return SlotReading(
        slot, SlotState.FAULT, None, f"I2C expander at 0x{address:02X} not answering"
    )


@pytest.fixture
def fake(mock_factory: Any) -> FakeMcp23017:
    return FakeMcp23017(int_pin=mock_factory.pin(INT_PIN))


@pytest.fixture
def make(mock_factory: Any) -> Iterator[Callable[..., Mcp23017KeyReader]]:
    made: list[Mcp23017KeyReader] = []

    def build(bus: Any, **kw: Any) -> Mcp23017KeyReader:
        kw.setdefault("interrupt_pin", INT_PIN)
        kw.setdefault("retry_interval", 0.1)
        reader = Mcp23017KeyReader(bus, pin_factory=mock_factory, **kw)
        made.append(reader)
        return reader

    yield build
    for reader in made:
        reader.close()


def _started(make: Callable[..., Mcp23017KeyReader], bus: FakeMcp23017, **kw: Any) -> Recorder:
    rec = Recorder()
    make(bus, **kw).start(rec)
    assert rec.wait_readings(lambda rs: len(rs) >= 2), rec.snapshot()
    return rec


def test_mcp23017_setup_writes_the_datasheet_registers(make: Any, fake: FakeMcp23017) -> None:
    _started(make, fake)
    assert fake.writes == [
        (0x20, IOCON, [MIRROR | ODR]),  # 0x44: one INT line for both ports, open drain
        (0x20, IODIRA, [0xFF, 0xFF]),  # all inputs
        (0x20, IPOLA, [0x00, 0x00]),  # no inversion: closed switch reads 0
        (0x20, GPPUA, [0xFF, 0xFF]),  # internal pull-ups
        (0x20, INTCONA, [0x00, 0x00]),  # interrupt on change
        (0x20, GPINTENA, [0x7F, 0x7F]),  # GPA0-6 and GPB0-6, enabled last
    ]
    assert fake.regs[IOCON] == 0x44
    assert fake.reads == [(0x20, GPIOA, 2)]


def test_mcp23017_both_slots_report_empty_at_start(make: Any, fake: FakeMcp23017) -> None:
    rec = _started(make, fake)
    assert sorted(rec.snapshot(), key=lambda r: r.slot.value) == [
        _empty(Role.ATTACKER),
        _empty(Role.DEFENDER),
    ]


def test_mcp23017_key_seated_before_start_is_reported(make: Any, fake: FakeMcp23017) -> None:
    fake.seat(ATTACKER, W_COL)
    rec = _started(make, fake)
    assert rec.last(Role.ATTACKER) == _present(Role.ATTACKER, W_COL)
    assert rec.last(Role.DEFENDER) == _empty(Role.DEFENDER)


def test_mcp23017_interrupt_reads_both_ports_in_one_block_read(
    make: Any, fake: FakeMcp23017
) -> None:
    rec = _started(make, fake)
    fake.reads.clear()
    fake.seat(ATTACKER, W_COL)
    rec.wait_last(Role.ATTACKER, _present(Role.ATTACKER, W_COL))
    assert rec.last(Role.DEFENDER) == _empty(Role.DEFENDER)
    # A second interrupt: by its report, any read the first one still caused is in.
    fake.seat(DEFENDER, B_FLG)
    rec.wait_last(Role.DEFENDER, _present(Role.DEFENDER, B_FLG))
    assert fake.reads == [(0x20, GPIOA, 2)] * 2


def test_mcp23017_defender_on_port_b_uses_the_mirrored_interrupt(
    make: Any, fake: FakeMcp23017
) -> None:
    rec = _started(make, fake)
    fake.seat(DEFENDER, B_FLG)
    rec.wait_last(Role.DEFENDER, _present(Role.DEFENDER, B_FLG))
    assert all(r.state is not SlotState.PRESENT for r in rec.snapshot() if r.slot is Role.ATTACKER)
    fake.seat(DEFENDER, "0000000")
    rec.wait_last(Role.DEFENDER, _empty(Role.DEFENDER))


def test_mcp23017_idle_with_interrupt_line_does_not_poll(make: Any, fake: FakeMcp23017) -> None:
    # A poller reads every debounce window, and each report comes a window after a
    # read: by the time a report is in, a poller would have read again.
    rec = _started(make, fake)
    assert fake.reads == [(0x20, GPIOA, 2)]  # only the read at setup
    fake.seat(ATTACKER, W_COL)
    rec.wait_last(Role.ATTACKER, _present(Role.ATTACKER, W_COL))
    assert fake.reads == [(0x20, GPIOA, 2)] * 2  # and the one the interrupt asked for


def test_mcp23017_rereads_while_interrupt_line_stays_low(make: Any, fake: FakeMcp23017) -> None:
    rec = _started(make, fake)
    fake.release_on_read = False  # as if a read were lost: INT stays asserted
    fake.seat(ATTACKER, W_COL)
    rec.wait_last(Role.ATTACKER, _present(Role.ATTACKER, W_COL))
    wait_until(lambda: len(fake.reads) >= 4)
    assert fake.int_pin is not None
    fake.int_pin.drive_high()
    fake.release_on_read = True
    # The next interrupt's read finds INT released: the re-reading stops there,
    # and the one after that costs exactly one read.
    fake.seat(DEFENDER, B_FLG)
    rec.wait_last(Role.DEFENDER, _present(Role.DEFENDER, B_FLG))
    settled = len(fake.reads)
    fake.seat(DEFENDER, "0000000")
    rec.wait_last(Role.DEFENDER, _empty(Role.DEFENDER))
    assert len(fake.reads) == settled + 1


def test_mcp23017_half_seated_key_reports_invalid(make: Any, fake: FakeMcp23017) -> None:
    clock = FakeClock()
    rec = Recorder(clock)
    make(fake, invalid_after=0.3, clock=clock).start(rec)
    clock.advance(0.03)  # the debounce window
    assert rec.wait_readings(lambda rs: len(rs) >= 2), rec.snapshot()
    half = "0011000"  # W:COL missing switch 1

    def seat_and_read(word: str) -> None:
        """Seat ``word`` and wait until the interrupt's read took it in (at the clock's now)."""
        reads = len(fake.reads)
        fake.seat(ATTACKER, word)
        wait_until(lambda: len(fake.reads) > reads)

    seat_and_read(half)
    clock.advance(0.29)
    # Pushed home just before invalid_after: the half-seated spell is judged as of
    # now (INVALID would come first), then the key settles.
    seat_and_read(W_COL)
    clock.advance(0.03)
    rec.wait_last(Role.ATTACKER, _present(Role.ATTACKER, W_COL))
    assert all(r.state is not SlotState.INVALID for r in rec.snapshot())
    seated_at = clock()
    seat_and_read(half)  # slides out half way and stays
    clock.advance(0.3)
    assert rec.wait_readings(lambda rs: rs[-1].state is SlotState.INVALID)
    assert rec.times[-1] - seated_at >= 0.3 - 1e-9  # the fake clock adds in floats
    assert rec.last(Role.ATTACKER) == SlotReading(
        Role.ATTACKER, SlotState.INVALID, None, "key not fully seated or bad code"
    )


def test_mcp23017_polls_without_interrupt_pin(make: Any) -> None:
    bus = FakeMcp23017()  # INTA not wired
    rec = _started(make, bus, interrupt_pin=None)
    bus.seat(ATTACKER, W_COL)
    bus.seat(DEFENDER, B_FLG)
    rec.wait_last(Role.ATTACKER, _present(Role.ATTACKER, W_COL))
    rec.wait_last(Role.DEFENDER, _present(Role.DEFENDER, B_FLG))
    assert set(bus.reads) == {(0x20, GPIOA, 2)}


def test_mcp23017_absent_chip_reports_fault_then_recovers(make: Any, fake: FakeMcp23017) -> None:
    fake.fail = True
    rec = Recorder()
    make(fake).start(rec)
    assert rec.wait_readings(lambda rs: len(rs) >= 2)
    assert set(rec.snapshot()) == {_fault(Role.ATTACKER), _fault(Role.DEFENDER)}
    failed = fake.unanswered
    wait_until(lambda: fake.unanswered >= failed + 3)  # a few retries, still failing
    assert len(rec.snapshot()) == 2  # FAULT is not repeated
    fake.seat(ATTACKER, W_COL)
    fake.fail = False
    rec.wait_last(Role.ATTACKER, _present(Role.ATTACKER, W_COL))
    rec.wait_last(Role.DEFENDER, _empty(Role.DEFENDER))
    assert fake.writes[0] == (0x20, IOCON, [0x44])
    assert fake.writes[-1] == (0x20, GPINTENA, [0x7F, 0x7F])


def test_mcp23017_io_error_mid_game_reports_fault_then_current_state(
    make: Any, fake: FakeMcp23017
) -> None:
    rec = _started(make, fake)
    fake.seat(ATTACKER, W_COL)
    rec.wait_last(Role.ATTACKER, _present(Role.ATTACKER, W_COL))
    fake.fail = True
    fake.seat(DEFENDER, B_FLG)  # the interrupt's read fails
    rec.wait_last(Role.ATTACKER, _fault(Role.ATTACKER))
    rec.wait_last(Role.DEFENDER, _fault(Role.DEFENDER))
    writes_before = len(fake.writes)
    fake.fail = False
    rec.wait_last(Role.ATTACKER, _present(Role.ATTACKER, W_COL))  # same key, reported again
    rec.wait_last(Role.DEFENDER, _present(Role.DEFENDER, B_FLG))
    assert len(fake.writes) >= writes_before + 6  # set up afresh


def test_mcp23017_custom_address_and_ports(make: Any, mock_factory: Any) -> None:
    bus = FakeMcp23017(address=0x27, int_pin=mock_factory.pin(INT_PIN))
    rec = _started(make, bus, address=0x27, attacker_bits=DEFENDER, defender_bits=ATTACKER)
    assert bus.writes[-1] == (0x27, GPINTENA, [0x7F, 0x7F])
    bus.seat(DEFENDER, W_COL)  # port B is now the attacker slot
    rec.wait_last(Role.ATTACKER, _present(Role.ATTACKER, W_COL))
    bus.fail = True
    bus.seat(DEFENDER, "0000000")
    rec.wait_last(Role.DEFENDER, _fault(Role.DEFENDER, 0x27))


def test_mcp23017_interrupt_mask_covers_only_used_bits(make: Any, fake: FakeMcp23017) -> None:
    _started(make, fake, attacker_bits=[0, 1, 2, 3, 4, 5, 7], defender_bits=range(9, 16))
    assert fake.writes[-1] == (0x20, GPINTENA, [0xBF, 0xFE])


@pytest.mark.parametrize(
    "kw",
    [
        {"address": 0x40},
        {"address": 0x1F},
        {"attacker_bits": range(0, 6)},
        {"defender_bits": range(8, 16), "attacker_bits": [0, 1, 2, 3, 4, 5, 16]},
        {"defender_bits": range(6, 13)},  # overlaps the attacker's GPA6
        {"retry_interval": 0},
        {"window": -1.0},
    ],
)
def test_mcp23017_bad_configuration_raises(
    make: Any, fake: FakeMcp23017, kw: dict[str, Any]
) -> None:
    with pytest.raises(ReaderError):
        make(fake, **kw)


def test_mcp23017_close_is_idempotent_and_stops_reading(make: Any, fake: FakeMcp23017) -> None:
    rec = Recorder()
    reader = make(fake)
    reader.start(rec)
    assert rec.wait_readings(lambda rs: len(rs) >= 2)
    reader.close()
    reader.close()
    # close() joined the reader's thread: nothing is left to read the chip.
    assert not [t for t in threading.enumerate() if t.name == "mcp23017-0x20"]
    reads = len(fake.reads)
    fake.seat(ATTACKER, W_COL)
    assert len(fake.reads) == reads
    assert len(rec.snapshot()) == 2
    with pytest.raises(ReaderError):
        reader.start(rec)


def test_mcp23017_open_bus_missing_bus_raises_reader_error() -> None:
    with pytest.raises(ReaderError):
        open_bus(250)

