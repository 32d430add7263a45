"""Simulator scripts: the manual's example game piped in, `run --script`, stdin under systemd."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import urllib.request
from pathlib import Path

import pytest

from tests.support.rig import write_config
from tests.support.spawn import gg_arbiter
from tests.support.waiting import WAIT

#: The manual's simulator page, which shows the example game.
SIMULATOR_PAGE = Path(__file__).resolve().parents[2] / "docs" / "play" / "simulator.md"


def manual_game() -> tuple[str, list[str]]:
    """The simulator page's "whole game to Taps": the script it shows, the lines it says print."""
    text = SIMULATOR_PAGE.read_text()
    block = text.split("A whole game to Taps:", 1)[1].split("```text\n", 1)[1]
    block = block.split("```", 1)[0]
    script, expected = [], []
    for line in block.splitlines():
        command, _, shown = line.partition("->")
        script.append(command.strip())
        expected += [part.strip() for part in shown.split("...") if part.strip()]
    return "".join(f"{c}\n" for c in script), expected


def sim_args(tmp_path: Path) -> list[str]:
    """`run` on the simulator with the battle phrase on (what `clear` used to interrupt)."""
    config = write_config(tmp_path, battle=True)
    config.write_text(config.read_text().replace('kind = "keys-gpio"', 'kind = "sim"'))
    return ["run", "--config", str(config), "--data", str(tmp_path / "data"),
            "--host", "127.0.0.1", "--port", "0"]


def in_order(lines: list[str], expected: list[str]) -> bool:
    """Each of ``expected`` is in some line of ``lines``, in this order."""
    at = 0
    for text in expected:
        while at < len(lines) and text not in lines[at]:
            at += 1
        if at == len(lines):
            return False
        at += 1
    return True


@pytest.mark.timeout(120)
def test_manual_game_piped_reaches_taps_and_ends_by_itself(tmp_path: Path) -> None:
    script, expected = manual_game()
    assert "clear" in script and "[game over] flag_captured: White wins" in expected
    env = dict(os.environ, GG_ARBITER_LOG="WARNING")
    proc = subprocess.run(
        [*gg_arbiter(), *sim_args(tmp_path)],
        input=script, capture_output=True, text=True, timeout=45, env=env,
    )
    out = proc.stdout
    assert proc.returncode == 0, out + proc.stderr
    assert "moved while deciding" not in out, out
    lines = out.splitlines()
    assert in_order(lines, ["[verdict] challenge 1: ATTACKER survives", "[state] idle",
                            "[verdict] challenge 2: ATTACKER survives",
                            "[game over] flag_captured: White wins", "[tune] taps",
                            "shutting down"]), out
    assert in_order(lines, expected), (
        f"docs/play/simulator.md promises {expected}, the run printed:\n{out}"
    )


@pytest.mark.timeout(60)
def test_run_script_file_plays_then_stops(tmp_path: Path) -> None:
    script = tmp_path / "game.txt"
    script.write_text("# a comment\nattacker W:SPY\ndefender B:5*G\nclear\nstatus\n")
    args = sim_args(tmp_path)
    proc = subprocess.run(
        [*gg_arbiter(), *args, "--script", str(script)],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=45,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert in_order(lines, ["[verdict] challenge 1: ATTACKER survives", "[state] idle",
                            '"challenge_count": 1', "shutting down"]), proc.stdout
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    proc = subprocess.run(
        [*gg_arbiter(), *args, "--script", str(empty)],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=45,
    )
    assert proc.returncode == 0 and "shutting down" in proc.stdout, proc.stdout + proc.stderr
    proc = subprocess.run(
        [*gg_arbiter(), *args, "--script", str(tmp_path / "missing.txt")],
        capture_output=True, text=True, timeout=45,
    )
    assert proc.returncode == 2 and "cannot read the script" in proc.stderr, proc.stderr


@pytest.mark.timeout(60)
def test_run_with_dev_null_stdin_keeps_serving(tmp_path: Path) -> None:
    """systemd gives the service /dev/null: its end must not stop the arbiter."""
    proc = subprocess.Popen(
        [*gg_arbiter(), *sim_args(tmp_path)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        assert proc.stdout is not None
        seen: list[str] = []
        url = ""
        for line in proc.stdout:  # bounded: the child prints a few lines, then this one
            seen.append(line)
            if line.startswith("Status page: "):
                url = line.split()[2]
            if "end of input" in line:
                break
        assert "still serving" in seen[-1], "".join(seen)
        assert proc.poll() is None, "".join(seen)
        with urllib.request.urlopen(f"{url}api/status", timeout=WAIT) as reply:
            assert json.load(reply)["state"] == "idle"
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=3 * WAIT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=WAIT)
    assert proc.returncode == 0 and "shutting down" in rest, "".join(seen) + rest
