"""`gg-arbiter hub import-trf`, `bye`, `pair`, `forfeit`, `export trf` (issue 26): an event
as bbpPairings writes it (CR line endings, no XXR, forfeits, H/Z/U byes) continued from
the command line, each action in the audit log."""

from __future__ import annotations

from pathlib import Path

import pytest

from arbiter.app.cli import main
from arbiter.tournament.trf import import_trf

EVENT = "open"
GOLDEN = Path(__file__).parents[1] / "tournament" / "golden" / "trf"
FILE = GOLDEN / "gen-020p-7r-f10-h10-r20-seed1.trf"


def hub(data: Path, *args: str) -> int:
    return main(["hub", "--event", EVENT, "--data", str(data), *args])


def test_hub_cli_continues_a_real_trf_with_a_bye_and_forfeits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert b"\r" in FILE.read_bytes() and b"XXR" not in FILE.read_bytes()
    assert hub(tmp_path, "import-trf", str(FILE)) == 0
    # No XXR: the length is the organiser's to set, and the import says so.
    out = capsys.readouterr().out
    assert "20 player(s), 7 round(s) (the file gives no number of rounds" in out
    assert hub(tmp_path, "rounds", "8") == 0
    # Round 8 is the next: the bye defaults to it, and to half a point.
    assert hub(tmp_path, "bye", "Test0004 Player0004") == 0
    out = capsys.readouterr().out
    assert "Test0004 Player0004: a 0.5-point bye in round 8, not paired" in out
    assert "round 8: Test0004 Player0004 (H)" in out
    assert hub(tmp_path, "bye", "Test0004 Player0004") == 2  # held already
    assert "already has a bye" in capsys.readouterr().err
    assert hub(tmp_path, "bye", "Test0004 Player0004", "--round", "3") == 2
    assert "paired already" in capsys.readouterr().err
    assert hub(tmp_path, "pair") == 0
    pairing = capsys.readouterr().out
    assert "Test0004 Player0004" not in pairing
    assert hub(tmp_path, "forfeit", "8", "1", "white", "--who", "Chief") == 0
    assert hub(tmp_path, "forfeit", "8", "2", "none", "--who", "Chief") == 0
    assert capsys.readouterr().out.splitlines() == [
        "round 8 board 1: white wins by forfeit", "round 8 board 2: neither came"]
    assert hub(tmp_path, "forfeit", "8", "1", "both") == 2  # argparse: not a side
    capsys.readouterr()
    assert hub(tmp_path, "audit") == 0
    audit = capsys.readouterr().out
    assert "bye" in audit and "+/-" in audit and "-/-" in audit and "Chief" in audit
    for board in range(3, 10):
        assert hub(tmp_path, "result", "8", str(board), "1/2-1/2") == 0
    assert hub(tmp_path, "export", "trf") == 0
    exported = import_trf(capsys.readouterr().out)
    r8 = [g for g in exported.games if g.pairing.round == 8]
    assert sum(g.forfeit for g in r8) == 2
    assert [(g.pairing.white, g.bye.value) for g in r8 if g.pairing.is_bye and
            g.pairing.white == "Test0004 Player0004"] == [("Test0004 Player0004", "H")]


def test_hub_cli_bye_can_be_taken_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert hub(tmp_path, "players", "add", "Ana") == 0
    assert hub(tmp_path, "bye", "Ana", "--round", "2", "--points", "0") == 0
    assert "a 0-point bye in round 2" in capsys.readouterr().out
    assert hub(tmp_path, "bye", "Ana", "--round", "2", "--cancel") == 0
    assert "Ana: no bye in round 2" in capsys.readouterr().out
    assert hub(tmp_path, "bye", "Ana", "--round", "2", "--cancel") == 2
    assert "has no bye" in capsys.readouterr().err
