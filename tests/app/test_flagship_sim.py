"""The flagship (reader.kind = "mcu": a Pico, two RC522 boards, NTAG213 stickers) in the
simulator: stickers of 7-byte UIDs, enrollment on the terminal and the console, the
monitor's bench per reader kind, and `gg-arbiter enroll` failing loudly."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

import pytest

from arbiter.app.assembly import build_arbiter
from arbiter.app.bench_sim import BenchSim
from arbiter.app.cli import main
from arbiter.app.config import Config, load_config
from arbiter.app.errors import BenchCommandError
from arbiter.app.sim_console import SimConsole
from arbiter.device.enrollment import EnrollmentSession
from arbiter.device.errors import DeviceError
from arbiter.drivers.readers.base import SlotReading, SlotState
from arbiter.drivers.readers.errors import SimTagError
from arbiter.drivers.readers.sim import SIM_TAGS, SimSlots, sticker_uid
from arbiter.rules.army import PhysicalPiece, all_physical_pieces
from arbiter.rules.verdict import Role
from arbiter.storage.registry import TagRegistry
from tests.support.rig import write_config
from tests.support.waiting import wait_until

A, D = Role.ATTACKER, Role.DEFENDER
MCU_LENGTHS = frozenset((8, 10, 14, 20))  # PROTOCOL.md: RC522 4/7/10-byte UIDs, RDM6300 10
NTAG = "04A1B2C3D48E80"  # an NTAG213's 7-byte UID (NXP's 04 first)


def pp(text: str) -> PhysicalPiece:
    return PhysicalPiece.parse(text)


def _config(tmp_path: Path, kind: str = "mcu") -> Config:
    config = load_config(write_config(tmp_path), data_dir=tmp_path / "data")
    return replace(config, reader=replace(config.reader, kind=kind))


# -- the simulated stickers ---------------------------------------------------------


def test_every_piece_has_its_own_ntag213_like_sticker() -> None:
    uids = {sticker_uid(p) for p in all_physical_pieces()}
    assert len(uids) == 42
    assert all(len(u) == 14 and u.startswith("04") and int(u, 16) >= 0 for u in uids)


def test_sim_slots_with_stickers_seat_the_untagged_copy_first(tmp_path: Path) -> None:
    registry = TagRegistry.in_directory(tmp_path)
    got: list[SlotReading] = []
    slots = SimSlots(registry, MCU_LENGTHS, "mcu")
    slots.start(got.append)
    slots.seat(A, "W:PVT")
    assert got[-1] == SlotReading(A, SlotState.PRESENT, sticker_uid(pp("W:PVT#1")))
    registry.enroll(sticker_uid(pp("W:PVT#1")), pp("W:PVT#1"))
    slots.seat(A, "W:PVT")  # #1 has its tag now: the next untagged one
    assert got[-1] == SlotReading(A, SlotState.PRESENT, sticker_uid(pp("W:PVT#2")))
    slots.seat(D, "B:SPY#2")
    assert got[-1] == SlotReading(D, SlotState.PRESENT, sticker_uid(pp("B:SPY#2")))


def test_sim_slots_once_all_are_tagged_seat_one_not_in_the_other_slot(tmp_path: Path) -> None:
    registry = TagRegistry.in_directory(tmp_path)
    for piece in all_physical_pieces():
        registry.enroll(sticker_uid(piece), piece)
    got: list[SlotReading] = []
    slots = SimSlots(registry, MCU_LENGTHS, "mcu")
    slots.start(got.append)
    slots.seat(A, "W:SPY")
    slots.seat(D, "W:SPY")
    assert [r.token for r in got[-2:]] == [sticker_uid(pp("W:SPY#1")), sticker_uid(pp("W:SPY#2"))]


@pytest.mark.parametrize("tag", [NTAG, "DEADBEEF", "62E3086CED", "04" * 10])
def test_sim_slots_hold_every_mcu_tag_length(tmp_path: Path, tag: str) -> None:
    got: list[SlotReading] = []
    slots = SimSlots(TagRegistry.in_directory(tmp_path), MCU_LENGTHS, "mcu")
    slots.start(got.append)
    slots.hold(A, tag.lower())
    assert got[-1] == SlotReading(A, SlotState.PRESENT, tag)


@pytest.mark.parametrize(("kind", "lengths", "tag"), [
    ("mcu", MCU_LENGTHS, "04A1B2C3D48E"),  # 12 digits: no UID size
    ("mcu", MCU_LENGTHS, "04A1B2C3D48EZZ"),
    ("rdm6300", frozenset((10,)), NTAG),  # an RDM6300 reads EM4100 ids only
])
def test_sim_slots_refuse_a_tag_the_kind_never_sends(
        tmp_path: Path, kind: str, lengths: frozenset[int], tag: str) -> None:
    slots = SimSlots(TagRegistry.in_directory(tmp_path), lengths, kind)
    with pytest.raises(SimTagError, match=f"a {kind} tag id is"):
        slots.hold(A, tag)


def test_sim_slots_by_name_take_no_tags() -> None:
    with pytest.raises(SimTagError, match="by name"):
        SimSlots().hold(A, NTAG)


# -- run --sim with the flagship's reader: enrollment and a game on the console ----------


def test_run_sim_mcu_enrolls_on_the_console_then_judges(tmp_path: Path) -> None:
    registry = TagRegistry(tmp_path / "data" / SIM_TAGS)  # the simulator's stickers
    for piece in all_physical_pieces()[:-1]:  # all but the last (B:FLG), quickly
        registry.enroll(sticker_uid(piece), piece)
    arbiter = build_arbiter(_config(tmp_path), sim=True)
    lines: list[str] = []
    console = SimConsole(arbiter, lines.append)
    arbiter.start()
    try:
        assert arbiter.can_enroll
        console.command("enroll")
        assert "[enroll] [41/42] Put B:FLG in the ATTACKER slot" in lines
        console.command("enroll next W:SPY")  # every Spy has its tag: refused, still B:FLG
        assert any(line.startswith("[refused] W:SPY already has a tag") for line in lines)
        console.command("attacker B:FLG")
        wait_until(lambda: not arbiter.enrollment_status()["active"], what="enrollment over")
        console.show_enrollment()
        assert f"[enroll] B:FLG enrolled with tag {sticker_uid(pp('B:FLG'))}" in lines
        console.command("clear")
        console.command("new")
        console.command("attacker W:SPY")
        console.command("defender B:5*G")
        wait_until(lambda: arbiter.status()["challenge_count"] == 1, what="challenge 1")
        assert arbiter.status()["last_verdict"] == "attacker"  # the Spy beats the General
        console.command("tag defender 04A1B2C3D48E")
        assert any("[refused] a mcu tag id is 8, 10, 14 or 20 hex digits" in line
                   for line in lines)
    finally:
        arbiter.close()


# -- monitor --sim: each kind's tags ---------------------------------------------------


def test_bench_mcu_takes_ntag_uids_and_heights(tmp_path: Path) -> None:
    readings: list[SlotReading] = []
    bench = BenchSim(_config(tmp_path))
    try:
        for reader in bench.readers:
            reader.start(readings.append)
        bench.command(f"tag attacker {NTAG}")
        wait_until(lambda: SlotReading(A, SlotState.PRESENT, NTAG) in readings)
        # the stated model: 30 mm reach at 33 dB, floor 3 mm over the antenna
        bench.command("height attacker 25")
        bench.command("height attacker 28")
        wait_until(lambda: readings[-1] == SlotReading(A, SlotState.EMPTY))
        with pytest.raises(BenchCommandError, match="8, 10, 14 or 20 hex digits"):
            bench.command("tag defender 04A1B2")
        with pytest.raises(BenchCommandError, match="no tag in the defender slot"):
            bench.command("height defender 10")
    finally:
        bench.close()


def test_bench_rdm6300_keeps_its_10_digit_ids(tmp_path: Path) -> None:
    bench = BenchSim(_config(tmp_path, "rdm6300"))
    try:
        bench.command("tag attacker 62E3086CED")
        with pytest.raises(BenchCommandError, match="a rdm6300 tag id is 10 hex digits"):
            bench.command(f"tag attacker {NTAG}")
        with pytest.raises(BenchCommandError, match="height is for the mcu reader"):
            bench.command("height attacker 10")
    finally:
        bench.close()


# -- gg-arbiter enroll: the rehearsal, and every error non-zero -------------------------------


def _enroll(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
            config: str, typed: str, *argv: str) -> tuple[int, str, str]:
    path = tmp_path / "config.toml"
    path.write_text(config, encoding="utf-8")
    monkeypatch.setattr("sys.stdin", io.StringIO(typed))
    code = main(["enroll", "--config", str(path), "--data", str(tmp_path / "data"), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_enroll_sim_rehearses_all_42_stickers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _enroll(tmp_path, monkeypatch, capsys, '[reader]\nkind = "mcu"\n',
                           "\n" * 42, "--sim")
    assert code == 0
    assert "Enrollment finished: 42 of 42 pieces have a tag" in out
    assert "enrolled 42 of 42 pieces" in out
    registry = TagRegistry(tmp_path / "data" / SIM_TAGS)
    assert all(registry.tag_of(p) == sticker_uid(p) for p in all_physical_pieces())
    # the real stickers' registry never holds a simulated one
    assert len(TagRegistry.in_directory(tmp_path / "data")) == 0


def test_enroll_sim_in_the_builders_own_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = _enroll(tmp_path, monkeypatch, capsys, '[reader]\nkind = "mcu"\n',
                           "B:SPY\n\nb:pvt\n\nB:SPY\nq\n", "--sim")
    assert code == 0
    assert "B:SPY#1 enrolled with tag" in out and "B:PVT#1 enrolled with tag" in out
    assert "Put B:SPY#2 in the ATTACKER slot" in out.split("B:PVT#1 enrolled")[1]


@pytest.mark.parametrize(("config", "argv", "message"), [
    ("", [], "enrollment is for RFID readers"),  # the default config: keys
    ('[reader]\nkind = "mcu"\n', ["--piece", "W:PVT"], "say which PVT"),
    ('[reader]\nkind = "mcu"\n', ["--piece", "X:SPY"], "unknown side"),
    ('[reader]\nkind = "mcu"\nmcu_port = "/nonexistent/gg-slots"\n', [],
     "reader fault: slot microcontroller on /nonexistent/gg-slots cannot be opened"),
    ('[reader]\nkind = "mcu"\nrx_gain_db = 30\n', [], "18, 23, 33, 38, 43, 48"),
    ('[reader]\nkind = "mcu"\nrx_gain_db = 17\n', [], "rx_gain_db"),
])
def test_enroll_every_error_exits_non_zero(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        config: str, argv: list[str], message: str) -> None:
    code, _, err = _enroll(tmp_path, monkeypatch, capsys, config, "", *argv)
    assert code != 0
    assert message in err


# -- order-free enrollment: the session ---------------------------------------------------


def test_session_choose_puts_the_named_piece_next(tmp_path: Path) -> None:
    registry = TagRegistry.in_directory(tmp_path)
    session = EnrollmentSession(registry)
    assert session.choose("b:pvt") == pp("B:PVT#1")
    assert session.prompt().startswith("Put B:PVT#1 in the ATTACKER slot")
    session.offer("04000000000001")
    assert session.current == pp("W:5*G")  # back to the walk's order
    assert session.choose("B:PVT") == pp("B:PVT#2")
    registry.enroll("04000000000002", pp("W:5*G"))
    with pytest.raises(DeviceError, match="W:5\\*G already has a tag"):
        session.choose("W:5*G")
    with pytest.raises(DeviceError, match="re-enrolls W:SPY#1 only"):
        EnrollmentSession(registry, only=pp("W:SPY#1")).choose("B:SPY")
