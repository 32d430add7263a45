"""The simulator: its slots, its console, and `gg-arbiter run` played from standard input."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from arbiter.app.assembly import build_arbiter
from arbiter.app.config import load_config
from arbiter.app.sim_console import SimConsole
from arbiter.drivers.readers.base import SlotReading, SlotState
from arbiter.drivers.readers.sim import SimSlots
from arbiter.rules.errors import PieceError
from arbiter.rules.verdict import Role
from tests.support.rig import write_config
from tests.support.spawn import Session, gg_arbiter
from tests.support.waiting import wait_until


def test_sim_slots_report_seat_swap_clear() -> None:
    got: list[SlotReading] = []
    slots = SimSlots()
    slots.start(got.append)
    slots.seat(Role.ATTACKER, "w:spy")
    slots.seat(Role.ATTACKER, "W:COL")  # a swap passes through empty
    slots.clear(Role.ATTACKER)
    with pytest.raises(PieceError):
        slots.seat(Role.DEFENDER, "B:KING")
    states = [(r.slot, r.state, r.token) for r in got]
    assert states == [
        (Role.ATTACKER, SlotState.EMPTY, None),
        (Role.DEFENDER, SlotState.EMPTY, None),
        (Role.ATTACKER, SlotState.PRESENT, "W:SPY"),
        (Role.ATTACKER, SlotState.EMPTY, None),
        (Role.ATTACKER, SlotState.PRESENT, "W:COL"),
        (Role.ATTACKER, SlotState.EMPTY, None),
    ]


def test_sim_console_plays_and_reports(tmp_path: Path) -> None:
    config = load_config(write_config(tmp_path), data_dir=tmp_path / "data")
    arbiter = build_arbiter(config, sim=True)
    lines: list[str] = []
    console = SimConsole(arbiter, lines.append)
    arbiter.add_output_listener(console.show_outputs)
    arbiter.start()
    try:
        for command in ["attacker W:SPY", "defender B:5*G"]:
            assert console.command(command)
        wait_until(lambda: arbiter.status()["challenge_count"] == 1, what="challenge 1")
        console.show_status(arbiter.status())
        console.command("clear")
        console.command("defender B:KING")
        console.command("bogus")
        console.command("end resignation W")
        console.show_status(arbiter.status())
        assert console.command("quit") is False
    finally:
        arbiter.close()
    text = "\n".join(lines)
    assert "[leds] attacker=on defender=off" in text
    assert "[refused] unknown rank: 'KING'" in text
    assert "unknown command 'bogus'" in text
    assert "[game over] resignation: White wins" in text
    assert "SPY" not in text.replace("attacker W:SPY", "")  # never echoes a rank it chose


@pytest.mark.timeout(120)
def test_sim_run_plays_a_game_to_taps_from_stdin(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    config.write_text(config.read_text().replace('kind = "keys-gpio"', 'kind = "sim"'))
    env = dict(os.environ, GG_ARBITER_LOG="INFO")
    args = ["run", "--config", str(config), "--data", str(tmp_path / "data")]
    run = Session([*args, "--host", "127.0.0.1", "--port", "0"], env=env)
    try:
        # Each line goes in once the output shows the state it needs.
        at = run.expect("simulator: type 'help'")
        for number, (attacker, defender) in enumerate([("W:SPY", "B:5*G"), ("B:PVT", "W:SPY")], 1):
            run.send(f"attacker {attacker}", f"defender {defender}")
            at = run.expect(f"[verdict] challenge {number}:", after=at)
            at = run.expect("[state] result", after=at)
            run.send("clear")
            at = run.expect("[state] idle", after=at)
        run.send("attacker W:COL", "defender B:FLG")
        run.expect("[state] game_over", after=at)
        run.send("status", "quit")
        code, out = run.finish(timeout=60)
    finally:
        run.kill()
    assert code == 0, out
    assert "running the simulator" in out or "simulator" in out
    assert "[verdict] challenge 1: ATTACKER survives" in out
    assert "[verdict] challenge 2: ATTACKER survives" in out
    assert "[tune] taps" in out
    assert "[game over] flag_captured: White wins" in out
    # "a Flag fell" is public (Taps plays); nothing else may name a rank.
    logs = [line.replace("a Flag fell", "") for line in out.splitlines() if " INFO " in line]
    assert any("challenge 3" in line for line in logs)
    for code_ in ("SPY", "5*G", "PVT", "FLG", "COL", "Spy", "Flag"):
        assert not any(code_ in line for line in logs), code_


def test_sim_run_says_no_hardware_in_one_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        [*gg_arbiter(), "selftest", "--data", str(tmp_path), "--tune", "ready", "--settle", "0.2"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No GPIO hardware here (not a Raspberry Pi): running the simulator." in proc.stderr
    assert "LED attacker: lit" in proc.stdout and "tune ready: played" in proc.stdout
    assert "PASS" in proc.stdout


def test_selftest_fails_when_a_reader_is_missing(tmp_path: Path) -> None:
    config = tmp_path / "rfid.toml"
    config.write_text(
        '[reader]\nkind = "rdm6300"\n'
        f'attacker_port = "{tmp_path}/no-such-port-a"\n'
        f'defender_port = "{tmp_path}/no-such-port-d"\n'
    )
    env = dict(os.environ, GPIOZERO_PIN_FACTORY="mock", GPIOZERO_MOCK_PIN_CLASS="mockpwmpin")
    proc = subprocess.run(
        [
            *gg_arbiter(),
            "selftest",
            "--config",
            str(config),
            "--data",
            str(tmp_path / "d"),
            "--tune",
            "ready",
            "--settle",
            "1.0",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "FAIL: reader attacker" in proc.stdout
    assert "FAIL: reader defender" in proc.stdout
    assert "Traceback" not in proc.stderr


def test_sim_console_survives_a_failing_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = load_config(write_config(tmp_path), data_dir=tmp_path / "data")
    arbiter = build_arbiter(config, sim=True)
    lines: list[str] = []
    console = SimConsole(arbiter, lines.append)
    arbiter.start()
    try:

        def broken() -> int:
            raise TimeoutError("worker stuck")

        monkeypatch.setattr(arbiter, "new_game", broken)
        assert console.command("new") is True
        assert "[error] new: worker stuck" in lines
        assert console.command("status") is True  # still reading
        assert lines[-1].startswith("{")
    finally:
        arbiter.close()
