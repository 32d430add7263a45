"""`gg-arbiter hub` and the event's length, names and TRF files: pairing past the length
refused until it is extended (audited), impossible lengths and files refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from arbiter.app.cli import main
from arbiter.tournament.trf import MAX_FILE_BYTES

EVENT = "club-night"


def hub(data: Path, *args: str) -> int:
    return main(["hub", "--event", EVENT, "--data", str(data), *args])


def _players(tmp_path: Path) -> str:
    path = tmp_path / "players.csv"
    path.write_text("name,rating\nAna,1800\nBen,1700\nCid,1600\nDee,1500\n")
    return str(path)


def _line(rank: int, name: str) -> str:
    return f"001 {rank:>4}      {name:<33} 2000{'':27}  0.0 {rank:>4}"


def test_hub_pair_is_refused_past_the_length_until_the_organiser_extends_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert hub(tmp_path, "players", "import", _players(tmp_path)) == 0
    assert hub(tmp_path, "rounds", "2") == 0
    assert hub(tmp_path, "pair", "--system", "round-robin") == 0
    assert hub(tmp_path, "pair", "--system", "round-robin") == 0
    capsys.readouterr()
    assert hub(tmp_path, "pair", "--system", "round-robin") == 2
    err = capsys.readouterr().err
    assert err.startswith("round 3: the event has 2 rounds, all paired; to play more, extend")
    assert "gg-arbiter hub rounds 3" in err and "Traceback" not in err
    assert hub(tmp_path, "pair-manual", "--game", "Ana", "Ben", "--game", "Cid", "Dee") == 2
    assert "round 3: the event has 2 rounds" in capsys.readouterr().err
    assert hub(tmp_path, "rounds") == 0
    assert capsys.readouterr().out == "2 round(s) paired of 2\n"
    assert hub(tmp_path, "rounds", "1") == 2  # shorter than the rounds paired
    assert "already has 2 paired" in capsys.readouterr().err
    assert hub(tmp_path, "rounds", "3", "--who", "chief") == 0
    assert hub(tmp_path, "pair", "--system", "round-robin") == 0
    capsys.readouterr()
    assert hub(tmp_path, "audit") == 0
    audit = [line.split("\t")[1:] for line in capsys.readouterr().out.splitlines()]
    assert audit == [["organiser", "rounds", "event", "None -> 2"],
                     ["chief", "rounds", "event", "2 -> 3"]]


@pytest.mark.parametrize(
    ("head", "says"),
    [("XXR 0", "line 2: XXR 0: an event has from 1 to 1000 rounds"),
     ("XXR -7", "line 2: XXR -7: an event has from 1 to 1000 rounds"),
     ("XXR 99999999999", "line 2: XXR 99999999999: an event has from 1 to 1000 rounds")],
)
def test_hub_import_trf_refuses_an_impossible_length(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], head: str, says: str
) -> None:
    trf = tmp_path / "event.trf"
    trf.write_text(f"012 X\n{head}\n{_line(1, 'Ana')}\n{_line(2, 'Ben')}\n")
    assert hub(tmp_path / "data", "import-trf", str(trf)) == 2
    assert capsys.readouterr().err == says + "\n"
    assert hub(tmp_path / "data", "players", "list") == 0
    assert capsys.readouterr().out == ""  # nothing imported


def test_hub_import_trf_without_xxr_leaves_the_length_to_the_organiser(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trf = tmp_path / "event.trf"
    trf.write_text(f"012 X\n{_line(1, 'Ana')}\n{_line(2, 'Ben')}\n")
    assert hub(tmp_path, "import-trf", str(trf)) == 0
    assert capsys.readouterr().out == (
        "2 player(s), 0 round(s) (the file gives no number of rounds (XXR): set it with"
        " gg-arbiter hub rounds N) imported\n")
    assert hub(tmp_path, "rounds") == 0
    assert capsys.readouterr().out == "0 round(s) paired of (not set)\n"


def test_hub_import_trf_refuses_a_file_no_event_needs_before_reading_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 50 MB of player lines (sparse: no disk used), refused by its size, not read.
    trf = tmp_path / "huge.trf"
    with trf.open("wb") as f:
        f.write(f"012 X\nXXR 5\n{_line(1, 'Ana')}\n".encode())
        f.truncate(50 * 1024 * 1024)
    assert trf.stat().st_size > MAX_FILE_BYTES
    assert hub(tmp_path / "data", "import-trf", str(trf)) == 2
    err = capsys.readouterr().err
    assert err == f"{trf}: more than 4 MB, far more than a TRF file of 9999 players holds:" \
                  " not read\n"


def test_hub_import_trf_refuses_a_start_rank_twice_and_names_against_the_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trf = tmp_path / "event.trf"
    trf.write_text(f"012 X\nXXR 5\n{_line(1, 'Alice')}\n{_line(2, 'Bob')}\n"
                   f"{_line(1, 'Mallory')}\n")
    assert hub(tmp_path / "a", "import-trf", str(trf)) == 2
    assert capsys.readouterr().err == "line 5: start rank 1 again (first on line 3)\n"
    trf.write_text(f"012 X\nXXR 5\n{_line(1, 'Ana' + chr(0x200B))}\n{_line(2, 'Ana')}\n")
    assert hub(tmp_path / "b", "import-trf", str(trf)) == 2
    assert "line 3: 'Ana\\u200b': U+200B (ZERO WIDTH SPACE) cannot be in a player's name" \
        in capsys.readouterr().err


@pytest.mark.parametrize(
    ("name", "says"),
    [("Ana\nBen", "U+000A"), ("Ana\x1b[2J", "U+001B"), ("Ana\udced", "a lone surrogate"),
     ("\u202eanA", "RIGHT-TO-LEFT OVERRIDE")],
)
def test_hub_players_add_keeps_the_names_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, says: str
) -> None:
    assert hub(tmp_path, "players", "add", name) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err and len(err.splitlines()) == 1
    assert hub(tmp_path, "export", "trf") == 0  # no player: still a valid file
    assert capsys.readouterr().out == f"012 {EVENT}\nXXR 1\nXXC white1\n"
