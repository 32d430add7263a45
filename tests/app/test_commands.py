"""The rest of the command line: tune, end, set-pin, run's shutdown."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import time
import wave
from pathlib import Path
from typing import Any

import pytest

from arbiter.rules.contenders import Contenders
from arbiter.rules.game import EndingKind
from arbiter.rules.pieces import Piece
from arbiter.rules.ranks import Side
from arbiter.storage.journal import GameStore, read_game
from tests.support.spawn import Session, free_port, gg_arbiter


def cli(
    *args: str, env: dict[str, str] | None = None, **kw: Any
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*gg_arbiter(), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env or {k: v for k, v in os.environ.items() if k != "GPIOZERO_PIN_FACTORY"},
        **kw,
    )


def test_commands_tune_renders_wav(tmp_path: Path) -> None:
    target = tmp_path / "taps.wav"
    result = cli("tune", "taps", "--wav", str(target))
    assert result.returncode == 0, result.stderr
    with wave.open(str(target)) as w:
        seconds = w.getnframes() / w.getframerate()
    assert 22 < seconds < 24  # Taps at 63 bpm
    listing = cli("tune", "--list").stdout
    for name in ("battle", "taps", "error", "ready", "fault"):
        assert name in listing
    assert cli("tune", "anthem").returncode == 2


def test_commands_tune_without_buzzer_lists_notes() -> None:
    result = cli("tune", "battle")
    assert result.returncode == 0
    assert "G4" in result.stdout and "--wav" in result.stdout


def test_commands_end_offline_records_ending(tmp_path: Path) -> None:
    with GameStore(tmp_path) as store:
        store.accept(Contenders.untagged(Piece.parse("W:COL"), Piece.parse("B:MAJ")))
    assert cli("end", "--reason", "resignation", "--data", str(tmp_path)).returncode == 2
    result = cli("end", "--reason", "resignation", "--winner", "B", "--data", str(tmp_path))
    assert result.returncode == 0, result.stderr
    game = read_game(tmp_path, 1)
    assert game.ending is not None
    assert (game.ending.kind, game.ending.winner) == (EndingKind.RESIGNATION, Side.BLACK)
    again = cli("end", "--reason", "draw", "--data", str(tmp_path))
    assert again.returncode == 2 and "already over" in again.stderr


def _spawn_run(config: Path, data: Path) -> subprocess.Popen[str]:
    """`gg-arbiter run` on loopback with this config and data directory."""
    return subprocess.Popen(
        [
            *gg_arbiter(),
            "run",
            "--config",
            str(config),
            "--data",
            str(data),
            "--host",
            "127.0.0.1",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _read_until_ready(proc: subprocess.Popen[str]) -> str:
    """The output up to the ready line."""
    assert proc.stdout is not None
    lines = []
    deadline = time.monotonic() + 30
    for line in proc.stdout:
        lines.append(line)
        if "ready in" in line:
            return "".join(lines)
        assert time.monotonic() < deadline
    raise AssertionError("gg-arbiter run did not get ready:\n" + "".join(lines))


def _start_run(tmp_path: Path, port: int) -> subprocess.Popen[str]:
    config = tmp_path / "c.toml"
    config.write_text(f'[reader]\nkind = "sim"\n[web]\nport = {port}\nadmin_pin = "432187"\n')
    proc = _spawn_run(config, tmp_path / "data")
    _read_until_ready(proc)
    return proc


@pytest.mark.timeout(120)
def test_commands_end_through_running_arbiter_and_sigterm(tmp_path: Path) -> None:
    port = free_port()
    proc = _start_run(tmp_path, port)
    try:
        config = str(tmp_path / "c.toml")
        data = str(tmp_path / "data")
        wrong = cli("end", "--reason", "draw", "--config", config, "--data", data, "--pin", "0000")
        assert wrong.returncode == 2 and "refused" in wrong.stderr
        ok = cli(
            "end",
            "--reason",
            "flag_home",
            "--winner",
            "W",
            "--config",
            config,
            "--data",
            data,
            "--pin",
            "432187",
        )
        assert ok.returncode == 0, ok.stderr
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=10) as r:
            status = json.load(r)
        assert status["state"] == "game_over"
        assert status["ending"] == {**status["ending"], "kind": "flag_home", "winner": "W"}
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0, out
    assert "shutting down" in out
    assert "Traceback" not in out
    game = read_game(tmp_path / "data", 1)
    assert game.ending is not None and game.ending.kind is EndingKind.FLAG_HOME


def test_commands_set_pin(tmp_path: Path) -> None:
    from web.kit.auth import check_pin

    assert cli("set-pin", "12", "--data", str(tmp_path)).returncode == 2
    result = cli("set-pin", "987654", "--data", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert check_pin(tmp_path, "987654")
    assert not check_pin(tmp_path, "123456")
    assert "987654" not in (tmp_path / "admin.json").read_text()


def test_commands_run_prints_generated_pin_once(tmp_path: Path) -> None:
    port = free_port()
    config = tmp_path / "c.toml"
    config.write_text(f'[reader]\nkind = "sim"\n[web]\nport = {port}\n')
    outputs = []
    for _ in range(2):
        proc = _spawn_run(config, tmp_path / "d")
        outputs.append(_read_until_ready(proc))
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    assert "Admin PIN" in outputs[0]
    assert "Admin PIN" not in outputs[1]


@pytest.mark.parametrize("port", ["99999", "-1", "http"])
def test_commands_run_rejects_bad_port(port: str) -> None:
    result = cli("run", "--sim", "--port", port)
    assert result.returncode == 2
    assert "port" in result.stderr and "Traceback" not in result.stderr


def test_commands_prompts_without_terminal_fail_cleanly(tmp_path: Path) -> None:
    result = cli("set-pin", "--data", str(tmp_path), stdin=subprocess.DEVNULL)
    assert result.returncode == 2
    assert "no PIN given" in result.stderr and "Traceback" not in result.stderr


def test_commands_selftest_unknown_tune_and_bad_log_level(tmp_path: Path) -> None:
    result = cli("selftest", "--sim", "--data", str(tmp_path), "--tune", "anthem")
    assert result.returncode == 2 and "no tune 'anthem'" in result.stderr
    env = {k: v for k, v in os.environ.items() if k != "GPIOZERO_PIN_FACTORY"}
    env["GG_ARBITER_LOG"] = "loud"
    result = cli("judge", "spy", "flg", env=env)
    assert result.returncode == 0 and "Traceback" not in result.stderr


def test_commands_damaged_tags_file_is_one_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "tags.json").write_text('{"tags": {"62E3')
    config = tmp_path / "c.toml"
    config.write_text(f'[reader]\nkind = "rdm6300"\nattacker_port = "{tmp_path}/a"\n')
    env = dict(os.environ, GPIOZERO_PIN_FACTORY="mock", GPIOZERO_MOCK_PIN_CLASS="mockpwmpin")
    result = cli("run", "--config", str(config), "--data", str(data), env=env)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "tags.json" in result.stderr and "Traceback" not in result.stderr
    assert (data / "tags.json").read_text() == '{"tags": {"62E3'  # never reset


def test_commands_pins_without_pwm_is_one_line(tmp_path: Path) -> None:
    env = dict(os.environ, GPIOZERO_PIN_FACTORY="mock")
    env.pop("GPIOZERO_MOCK_PIN_CLASS", None)
    result = cli("run", "--data", str(tmp_path), env=env)
    assert result.returncode == 2
    assert "cannot set up the pins" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.timeout(60)
def test_commands_damaged_admin_file_keeps_device_and_page_running(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "admin.json").write_text('{"secret":"x","pin":')
    port = free_port()
    config = tmp_path / "c.toml"
    config.write_text(f'[reader]\nkind = "sim"\n[web]\nport = {port}\n')
    run = Session(["run", "--config", str(config), "--data", str(data), "--host", "127.0.0.1"])
    try:
        run.expect("simulator: type 'help'")
        run.send("attacker W:SPY", "defender B:5*G")
        run.expect("[state] result")  # the device kept judging
        status = _http_status(port, "/api/status")  # the public page too
        admin = _http_status(port, "/admin")
        run.send("quit")
        code, out = run.finish(timeout=30)
    finally:
        run.kill()
    assert code == 0, out
    assert status == 200 and admin == 503
    assert "status page not started" not in out, out
    assert "admin access off" in out and "admin.json" in out and "set-pin" in out
    assert "[verdict] challenge 1: ATTACKER survives" in out
    assert (data / "admin.json").read_text() == '{"secret":"x","pin":'


def _http_status(port: int, path: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()
