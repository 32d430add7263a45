"""gg-arbiter monitor: raw watches on every reader kind, decoding, secrecy, the command."""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import serial

from arbiter.app.bench_sim import BenchSim
from arbiter.app.cli import main
from arbiter.app.config import Config, load_config
from arbiter.app.errors import BenchCommandError
from arbiter.app.monitor import Decoder, Monitor, game_on
from arbiter.drivers.fakes import FakeMcp23017
from arbiter.drivers.readers.base import SlotReading, SlotState
from arbiter.drivers.readers.gpio_keys import GpioKeyReader
from arbiter.drivers.readers.mcp23017 import Mcp23017KeyReader
from arbiter.drivers.readers.raw import RawKind, RawSample, watch_raw
from arbiter.drivers.readers.rdm6300 import Rdm6300Reader, encode_frame
from arbiter.rules.army import PhysicalPiece
from arbiter.rules.contenders import Contenders, Identity
from arbiter.rules.game import EndingKind
from arbiter.rules.keycode import DEFAULT_KEYCODE
from arbiter.rules.pieces import Piece
from arbiter.rules.ranks import Side
from arbiter.rules.verdict import Role
from arbiter.storage.journal import GameStore
from arbiter.storage.registry import TagRegistry
from tests.support.waiting import wait_until
from tests.support.web import rank_leaks

COL = DEFAULT_KEYCODE.codeword(Piece.parse("W:COL"))  # 1011000


def _config(tmp_path: Path, kind: str) -> Config:
    config = load_config(None, data_dir=tmp_path / "data")
    return replace(config, reader=replace(config.reader, kind=kind))


def _game_begun(data: Path, *, over: bool = False) -> None:
    """A game with one challenge in ``data`` (declared over if ``over``)."""
    with GameStore(data) as store:
        store.accept(Contenders(Identity(Piece.parse("W:SPY")), Identity(Piece.parse("B:5*G"))))
        if over:
            store.declare_end(EndingKind.RESIGNATION, Side.WHITE)


class Lines:
    """A thread-safe print target."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, line: str) -> None:
        with self._lock:
            self.lines.append(line)

    @property
    def text(self) -> str:
        with self._lock:
            return "\n".join(self.lines)


# -- game_on and the decoder ---------------------------------------------------


def test_game_on_between_games_and_during_one(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert game_on(data) is None  # nothing recorded
    GameStore(data).close()
    assert game_on(data) is None  # game 1 open, no challenge yet
    _game_begun(data)
    assert game_on(data) == 1
    with GameStore(data) as store:
        store.declare_end(EndingKind.DRAW, None)
    assert game_on(data) is None


def test_game_on_unreadable_record_counts_as_on(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "games").mkdir(parents=True)
    (data / "games" / "000001.jsonl").write_bytes(b"\xff\xfe garbage\n")
    assert game_on(data) is not None


def test_decoder_keys_and_tags(tmp_path: Path) -> None:
    keys = Decoder()
    assert keys.decode(COL) == ("a piece's code", "W:COL (White Colonel)")
    assert keys.decode("0000111")[1] is None  # an unused codeword
    registry = TagRegistry.in_directory(tmp_path)
    registry.enroll("62E3086CED", PhysicalPiece.parse("B:SPY#1"))
    tags = Decoder(registry)
    kind, piece = tags.decode("62e3086ced")
    assert kind == "an enrolled tag" and piece is not None and piece.startswith("B:SPY#1")
    assert tags.decode("100086F444") == ("tag not enrolled", None)


# -- the monitor's lines -----------------------------------------------------


@pytest.mark.parametrize("game", [None, 4])
def test_monitor_names_pieces_only_between_games(game: int | None) -> None:
    out = Lines()
    monitor = Monitor(Decoder(), lambda: game, out)
    monitor.on_raw(RawSample(RawKind.SWITCHES, Role.ATTACKER, COL))
    monitor.on_reading(SlotReading(Role.ATTACKER, SlotState.PRESENT, COL))
    assert COL in out.text  # the raw bits always show: the builder needs them
    if game is None:
        assert "W:COL (White Colonel)" in out.text
    else:
        assert rank_leaks(out.text) == []
        assert "name hidden: game 4 is on" in out.text


def test_monitor_explains_bad_patterns_and_sums_up_dead_switches() -> None:
    out = Lines()
    monitor = Monitor(Decoder(), lambda: None, out)
    for bits in ("0000000", "0010000", "1011100", "0000000"):
        monitor.on_raw(RawSample(RawKind.SWITCHES, Role.DEFENDER, bits))
    monitor.on_raw(RawSample(RawKind.SWITCHES, Role.DEFENDER, "0000000"))  # repeat: no line
    assert len(out.lines) == 4
    assert "1 of 7 closed (3)" in out.lines[1] and "stuck closed" in out.lines[1]
    assert "4 of 7 closed (1,3,4,5)" in out.lines[2]
    assert out.lines[3].endswith("-> empty")
    assert monitor.summary() == [
        "defender: switches seen closed: 1,3,4,5; never closed: 2,6,7"
    ]


def test_monitor_frames_show_once_per_change_and_count_refusals() -> None:
    out = Lines()
    monitor = Monitor(Decoder(TagRegistry(Path("/nonexistent/tags.json"))), lambda: None, out)
    for _ in range(3):
        monitor.on_raw(RawSample(RawKind.FRAME, Role.ATTACKER, "62E3086CED"))
    monitor.on_raw(RawSample(RawKind.FRAME, Role.ATTACKER, "62E3086CED 00", False,
                             "bad checksum"))
    assert len(out.lines) == 2
    assert "tag not enrolled" in out.lines[0]
    assert "REFUSED: bad checksum" in out.lines[1]
    assert monitor.summary() == ["attacker: 3 good frame(s), 1 refused"]


# -- raw watches on the real readers ----------------------------------------------


def test_gpio_key_reader_raw_watch_sees_patterns_before_debounce(mock_factory: object) -> None:
    pins = [5, 6, 12, 13, 19, 16, 26]
    reader = GpioKeyReader(Role.ATTACKER, pins, pin_factory=mock_factory)
    samples: list[RawSample] = []
    readings: list[SlotReading] = []
    try:
        assert watch_raw([reader], samples.append) == 1
        reader.start(readings.append)
        mock_factory.pin(5).drive_low()  # type: ignore[attr-defined]
        mock_factory.pin(12).drive_low()  # type: ignore[attr-defined]
        mock_factory.pin(13).drive_low()  # type: ignore[attr-defined]
        wait_until(lambda: any(r.token == COL for r in readings))
        texts = [s.text for s in samples]
        # Every step of the key going in, though only the last one settles.
        assert texts[0] == "0000000"
        assert "1000000" in texts and "1010000" in texts and texts[-1] == COL
        assert all(s.kind is RawKind.SWITCHES and s.slot is Role.ATTACKER for s in samples)
        assert [r.state for r in readings if r.state is not SlotState.EMPTY] == [
            SlotState.PRESENT
        ]
    finally:
        reader.close()


def test_mcp23017_raw_watch_sees_both_slots() -> None:
    bus = FakeMcp23017()
    bus.set_levels(0xFFFF & ~(0b1011 << 8) & ~0b0000001)  # defender 1,2,4 closed; attacker 1
    reader = Mcp23017KeyReader(bus, interrupt_pin=None)
    samples: list[RawSample] = []
    try:
        reader.watch_raw(samples.append)
        reader.start(lambda _r: None)
        wait_until(lambda: len(samples) >= 2)
        by_slot = {s.slot: s.text for s in samples[:2]}
        assert by_slot == {Role.ATTACKER: "1000000", Role.DEFENDER: "1101000"}
    finally:
        reader.close()


def test_rdm6300_raw_watch_sees_good_and_bad_frames() -> None:
    port = serial.serial_for_url("loop://", timeout=0.05)
    reader = Rdm6300Reader(Role.DEFENDER, serial_factory=lambda: port)
    samples: list[RawSample] = []
    try:
        reader.watch_raw(samples.append)
        reader.start(lambda _r: None)
        bad = bytearray(encode_frame("62E3086CED"))
        bad[11:13] = b"77"
        port.write(encode_frame("100086F444") + bytes(bad) + b"\x02XYZ\x03")
        wait_until(lambda: len(samples) >= 3)
        good, wrong, garbage = samples[:3]
        assert (good.kind, good.slot, good.text, good.ok) == (
            RawKind.FRAME, Role.DEFENDER, "100086F444", True)
        assert not wrong.ok and wrong.note == "bad checksum" and "expected 08" in wrong.text
        assert not garbage.ok and garbage.note == "malformed" and "<02>" in garbage.text
    finally:
        reader.close()


# -- the simulated bench, each reader kind ------------------------------------------


@pytest.fixture
def registry_dir(tmp_path: Path) -> Iterator[Path]:
    data = tmp_path / "data"
    data.mkdir()
    TagRegistry.in_directory(data).enroll("62E3086CED", PhysicalPiece.parse("W:COL#1"))
    yield data


@pytest.mark.parametrize("kind", ["keys-gpio", "keys-mcp23017", "rdm6300", "mcu"])
def test_bench_sim_seats_a_piece_each_reader_kind_reads(
    tmp_path: Path, registry_dir: Path, kind: str
) -> None:
    registry = TagRegistry.in_directory(registry_dir)
    bench = BenchSim(_config(tmp_path, kind),
                     lambda text: registry.tag_of(PhysicalPiece.parse(text + "#1")))
    samples: list[RawSample] = []
    readings: list[SlotReading] = []
    try:
        watch_raw(bench.readers, samples.append)
        for reader in bench.readers:
            reader.start(readings.append)
        bench.command("seat attacker W:COL")
        token = COL if kind.startswith("keys") else "62E3086CED"
        wait_until(lambda: SlotReading(Role.ATTACKER, SlotState.PRESENT, token) in readings)
        assert any(s.slot is Role.ATTACKER and token in s.text for s in samples)
        bench.command("clear attacker")
        wait_until(lambda: readings[-1] == SlotReading(Role.ATTACKER, SlotState.EMPTY),
                   what="the slot read empty again")
    finally:
        bench.close()


def test_bench_sim_refuses_commands_of_the_other_reader_family(tmp_path: Path) -> None:
    bench = BenchSim(_config(tmp_path, "keys-gpio"))
    try:
        with pytest.raises(BenchCommandError, match="reads switches"):
            bench.command("tag attacker 62E3086CED")
        with pytest.raises(BenchCommandError, match="switches are 1 to 7"):
            bench.command("press attacker 8")
        with pytest.raises(BenchCommandError, match="unknown command"):
            bench.command("jump attacker")
    finally:
        bench.close()


# -- the command ----------------------------------------------------------------


def _monitor(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
             argv: list[str], script: str) -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(script))
    code = main(["monitor", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
def test_monitor_command_sim_shows_a_stuck_switch_and_a_piece(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(tmp_path / "data")
    script = "press defender 6\nseat attacker W:COL\nquit\n"
    code, out, _ = _monitor(monkeypatch, capsys, ["--sim", "--kind", "keys-gpio",
                                                  "--data", data], script)
    assert code == 0
    assert "pieces are named (no game on)" in out
    assert "defender  switches ○○○○○●○ 0000010" in out
    assert "attacker  settled  PRESENT 1011000 -> W:COL (White Colonel)" in out
    assert "defender: switches seen closed: 6; never closed: 1,2,3,4,5,7" in out


@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
def test_monitor_command_hides_names_during_a_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    _game_begun(data)
    code, out, _ = _monitor(monkeypatch, capsys, ["--sim", "--kind", "keys-gpio",
                                                  "--data", str(data)], "seat attacker W:SPY\n")
    assert code == 0
    assert "settled  PRESENT" in out and "name hidden: game 1 is on" in out
    assert rank_leaks(out) == []


def test_monitor_command_says_how_to_stop_the_running_arbiter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    with GameStore(data):  # the running arbiter holds the data directory
        code, out, err = _monitor(monkeypatch, capsys, ["--kind", "rdm6300", "--data",
                                                        str(data)], "")
    assert code == 2 and out == ""
    assert "sudo systemctl stop gg-arbiter" in err and "the arbiter is running" in err


def test_monitor_command_refuses_the_sim_reader_kind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "c.toml"
    config.write_text('[reader]\nkind = "sim"\n', encoding="utf-8")
    code, _, err = _monitor(monkeypatch, capsys, ["--config", str(config), "--data",
                                                  str(tmp_path)], "")
    assert code == 2 and "nothing to monitor" in err
    assert not os.path.exists(tmp_path / "games")  # nothing created in the data dir
