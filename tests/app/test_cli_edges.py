"""Command-line edges a first player meets: pieces in `judge`, PIN prompts with no
terminal, `selftest` beside a running arbiter, and the manual's command-line page."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from arbiter.app.cli import main
from tests.support.cli_docs import missing_commands, unknown_commands
from tests.support.spawn import Session, free_port, gg_arbiter

COMMAND_LINE_PAGE = Path(__file__).resolve().parents[2] / "docs" / "appliance" / "command-line.md"


def cli_no_terminal(*args: str, env: dict[str, str] | None = None) -> Any:
    """`gg-arbiter ARGS` as from cron or a script: no controlling terminal, stdin /dev/null."""
    return subprocess.run(
        [*gg_arbiter(), *args], stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=60, start_new_session=True,
        env={k: v for k, v in (env or os.environ).items() if k != "GG_ARBITER_PIN"},
    )


@pytest.mark.parametrize(
    ("attacker", "defender", "survivor"),
    [("W:COL", "B:COL", "none"), ("w:spy", "B:5*g", "attacker"), ("B:PVT", "spy", "attacker"),
     ("flag", "White:Flag", "attacker")],
)
def test_judge_takes_pieces_as_readme_writes_them(
    attacker: str, defender: str, survivor: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["judge", attacker, defender, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["survivor"] == survivor


def test_judge_refuses_two_pieces_of_one_side(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["judge", "W:COL", "w:pvt"]) == 2
    err = capsys.readouterr().err
    assert "refused" in err and "both White" in err
    assert main(["judge", "W:COL", "X:PVT"]) == 2
    assert "unknown side" in capsys.readouterr().err


def test_set_pin_with_no_terminal_gives_the_real_way(tmp_path: Path) -> None:
    result = cli_no_terminal("set-pin", "--data", str(tmp_path))
    assert result.returncode == 2, result.stderr
    assert "GetPassWarning" not in result.stderr and "echoed" not in result.stderr
    assert "gg-arbiter set-pin PIN" in result.stderr
    assert result.stderr.count("\n") == 1, result.stderr  # one line


@pytest.mark.timeout(120)
def test_beside_a_running_arbiter_end_and_selftest_go_through_it(tmp_path: Path) -> None:
    port = free_port()
    config = tmp_path / "c.toml"
    config.write_text(f'[reader]\nkind = "sim"\n[web]\nport = {port}\nadmin_pin = "432187"\n')
    common = ["--config", str(config), "--data", str(tmp_path / "data")]
    run = Session(["run", *common, "--host", "127.0.0.1"])
    try:
        run.expect("ready in")
        selftest = cli_no_terminal("selftest", "--tune", "ready", *common)
        assert selftest.returncode == 2, selftest.stdout + selftest.stderr
        assert "--pin PIN" in selftest.stderr and "GG_ARBITER_PIN" in selftest.stderr
        selftest = cli_no_terminal("selftest", "--tune", "ready", "--pin", "432187", *common)
        assert selftest.returncode == 0, selftest.stdout + selftest.stderr
        assert f"through the running arbiter at http://127.0.0.1:{port}" in selftest.stdout
        assert "tune ready: played" in selftest.stdout and selftest.stdout.endswith("PASS\n")
        no_pin = cli_no_terminal("end", "--reason", "draw", *common)
        assert no_pin.returncode == 2, no_pin.stderr
        assert "GetPassWarning" not in no_pin.stderr
        assert "--pin PIN" in no_pin.stderr and "GG_ARBITER_PIN" in no_pin.stderr
        by_env = subprocess.run(
            [*gg_arbiter(), "end", "--reason", "draw", *common], stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=60,
            env=dict(os.environ, GG_ARBITER_PIN="432187"),
        )
        assert by_env.returncode == 0 and "ended: draw" in by_env.stdout, by_env.stderr
        run.proc.send_signal(signal.SIGTERM)
        code, out = run.finish()
    finally:
        run.kill()
    assert code == 0, out


def test_command_line_page_names_every_command_option_and_variable() -> None:
    """Every command and subcommand (``hub pair-manual``, ``hub players add``...) and each
    of their options, named in a command line for that very command (tests.support.cli_docs),
    and nothing the parser lacks."""
    section = COMMAND_LINE_PAGE.read_text()
    missing = missing_commands(section)
    assert unknown_commands(section) == []
    for variable in ("GG_ARBITER_PIN", "GG_ARBITER_LOG"):
        if variable not in section:
            missing.append(variable)
    assert not missing, f"docs/appliance/command-line.md does not name {missing}"


def test_hub_and_run_take_the_broker_options_alike() -> None:
    """One add_broker_options for both commands: the same options to the same values;
    the hub's hidden --connect-timeout (3 s unless given) is the hub's alone."""
    from arbiter.app.cli import build_parser

    given = ["--broker", "mqtts://hub@hall.local:8883", "--ca-file", "/etc/ca.pem",
             "--password-file", "/var/lib/gg-hub/hub.password"]
    hub = build_parser().parse_args(["hub", "--event", "club", *given])
    run = build_parser().parse_args(["run", *given])
    for args in (hub, run):
        assert (args.broker, args.ca_file, args.password_file) == (
            "mqtts://hub@hall.local:8883", "/etc/ca.pem", "/var/lib/gg-hub/hub.password")
    assert hub.connect_timeout == 3.0 and not hasattr(run, "connect_timeout")
    assert build_parser().parse_args(
        ["hub", "--event", "club", "--connect-timeout", "0.5"]).connect_timeout == 0.5
