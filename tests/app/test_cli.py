"""The gg-arbiter command line as PRODUCT.md states it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arbiter.app.cli import main
from arbiter.rules.contenders import Contenders
from arbiter.rules.pieces import Piece
from arbiter.storage.journal import GameStore

P = Piece.parse


def pair(attacker: str, defender: str) -> Contenders:
    return Contenders.untagged(P(attacker), P(defender))


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("gg-arbiter", path=str(Path(sys.executable).parent))
    command = [exe] if exe else [sys.executable, "-m", "arbiter.app.cli"]
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=60)


def test_cli_judge_spy_beats_general_json() -> None:
    result = run_cli("judge", "spy", "5*g", "--json")
    assert result.returncode == 0
    data = json.loads(result.stdout)
    assert data["survivor"] == "attacker"
    assert data["flag_fell"] is False


@pytest.mark.parametrize(
    ("attacker", "defender", "survivor", "flag"),
    [
        ("PVT", "SPY", "attacker", False),
        ("agent", "private", "defender", False),
        ("Flag", "flag", "attacker", True),
        ("flg", "sgt", "defender", True),
        ("col", "COL", "none", False),
    ],
)
def test_cli_judge_json_survivor(
    attacker: str, defender: str, survivor: str, flag: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["judge", attacker, defender, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["survivor"], data["flag_fell"]) == (survivor, flag)


def test_cli_judge_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["judge", "COL", "COL"]) == 0
    assert "split" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args", [["judge", "5*G"], ["judge", "kaiser", "spy"], ["bogus"], [], ["record", "x"]]
)
def test_cli_bad_arguments_one_line_no_traceback(args: list[str]) -> None:
    result = run_cli(*args)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_cli_unknown_rank_names_token() -> None:
    result = run_cli("judge", "kaiser", "spy")
    assert "'kaiser'" in result.stderr


def test_cli_help_and_version() -> None:
    assert "judge" in run_cli("--help").stdout
    assert run_cli("--version").stdout.startswith("gg-arbiter ")


def test_cli_record_hides_ranks_until_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with GameStore(tmp_path) as store:
        store.accept(pair("W:SPY", "B:5*G"))
        assert main(["record", "--data", str(tmp_path), "--json"]) == 0
        public = capsys.readouterr().out
        assert "SPY" not in public and "5*G" not in public
        assert json.loads(public)["verdicts"][0]["result"] == "attacker"
        store.accept(pair("B:1*G", "W:FLG"))
    assert main(["record", "--data", str(tmp_path), "1", "--json"]) == 0
    full = json.loads(capsys.readouterr().out)
    assert [c["attacker"] for c in full["challenges"]] == ["W:SPY", "B:1*G"]
    assert full["ending"]["winner"] == "B"
    assert main(["record", "--data", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "W:SPY attacks B:5*G: attacker" in text and "Black won" in text


def test_cli_record_hides_an_abandoned_games_ranks_until_the_next_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with GameStore(tmp_path) as store:
        store.accept(pair("W:SPY", "B:5*G"))
        store.new_game()  # game 1 abandoned
        for args in (["1", "--json"], ["1"]):
            assert main(["record", "--data", str(tmp_path), *args]) == 0
            out = capsys.readouterr().out
            assert "SPY" not in out and "5*G" not in out
        assert "until the next game has begun" in out
        store.accept(pair("B:COL", "W:MAJ"))  # game 2 begins
    assert main(["record", "--data", str(tmp_path), "1"]) == 0
    assert "W:SPY attacks B:5*G: attacker" in capsys.readouterr().out


def test_cli_record_corrupt_file_named(tmp_path: Path) -> None:
    with GameStore(tmp_path) as store:
        store.accept(pair("W:SPY", "B:5*G"))
    path = tmp_path / "games" / "000001.jsonl"
    path.write_bytes(path.read_bytes().replace(b"B:5*G", b"B:4*G"))
    result = run_cli("record", "--data", str(tmp_path))
    assert result.returncode != 0
    assert str(path) in result.stderr and "Traceback" not in result.stderr


# -- the PIN rule (arbiter.pinrule): ASCII digits, 6 to 12 for a new PIN ---------------

ARABIC_INDIC_PIN = "١٢٣٤٥٦"  # six digits to str.isdigit, none to the PIN rule


def test_run_with_non_ascii_pin_exits_2_and_never_starts(tmp_path: Path) -> None:
    """Such a PIN once passed the config check, then turned the status page off while
    the arbiter ran on: now start-up stops with one line naming the setting."""
    config = tmp_path / "c.toml"
    config.write_text(f'[web]\nport = 1\nadmin_pin = "{ARABIC_INDIC_PIN}"\n', encoding="utf-8")
    exe = shutil.which("gg-arbiter", path=str(Path(sys.executable).parent))
    command = [exe] if exe else [sys.executable, "-m", "arbiter.app.cli"]
    with subprocess.Popen(
        [*command, "run", "--sim", "--config", str(config), "--data", str(tmp_path / "d")],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        for line in proc.stdout:  # ends when the process exits (or is killed below)
            if "ready" in line or "status page not started" in line:
                proc.kill()
                pytest.fail(f"the arbiter started with a bad PIN: {line!r}")
        err = proc.stderr.read()
        assert proc.wait(timeout=60) == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "web.admin_pin" in lines[0] and str(config) in lines[0], err
    assert "Traceback" not in err


@pytest.mark.parametrize("pin", [ARABIC_INDIC_PIN, "2468", "12345", "12ab56", "1" * 13])
def test_set_pin_refuses_pin_breaking_the_rule(tmp_path: Path, pin: str) -> None:
    result = run_cli("set-pin", "--data", str(tmp_path), pin)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("set-pin:"), result.stderr
    assert "6 to 12 digits" in lines[0]
    assert not (tmp_path / "admin.json").exists()


def test_set_pin_refusing_a_4_digit_pin_says_an_old_one_still_logs_in(tmp_path: Path) -> None:
    result = run_cli("set-pin", "--data", str(tmp_path), "2468")
    assert result.returncode == 2 and "still logs in" in result.stderr


def test_hub_set_pin_refuses_a_short_pin(tmp_path: Path) -> None:
    result = run_cli("hub", "--event", "e", "--data", str(tmp_path), "set-pin", "2468")
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hub set-pin:"), result.stderr
    assert not (tmp_path / "admin.json").exists()


@pytest.mark.parametrize(("env", "args", "setting"), [
    ({"GG_ARBITER_PIN": ARABIC_INDIC_PIN}, [], "GG_ARBITER_PIN"),
    ({"GG_ARBITER_PIN": "12ab"}, [], "GG_ARBITER_PIN"),
    ({}, ["--pin", ARABIC_INDIC_PIN], "--pin"),
    ({}, ["--pin", "123"], "--pin"),
])
def test_pin_for_the_running_arbiter_is_checked_before_it_is_sent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    env: dict[str, str], args: list[str], setting: str,
) -> None:
    """A running arbiter (its data directory held) gets no request with a PIN that
    breaks the rule; the command exits 2 with one line naming where the PIN came from."""
    monkeypatch.delenv("GG_ARBITER_PIN", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    config = tmp_path / "c.toml"
    config.write_text("", encoding="utf-8")
    with GameStore(tmp_path / "d"):  # as the running arbiter holds it
        code = main(["end", "--reason", "draw", "--config", str(config),
                     "--data", str(tmp_path / "d"), "--port", "9", *args])
    err = capsys.readouterr().err
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{setting}:"), err
