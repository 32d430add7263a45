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


def test_cli_record_corrupt_file_named(tmp_path: Path) -> None:
    with GameStore(tmp_path) as store:
        store.accept(pair("W:SPY", "B:5*G"))
    path = tmp_path / "games" / "000001.jsonl"
    path.write_bytes(path.read_bytes().replace(b"B:5*G", b"B:4*G"))
    result = run_cli("record", "--data", str(tmp_path))
    assert result.returncode != 0
    assert str(path) in result.stderr and "Traceback" not in result.stderr
