"""A damaged journal line costs only itself; CRLF files are read (issue 8, item 6)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arbiter.rules.contenders import Contenders
from arbiter.rules.errors import EliminatedPieceError
from arbiter.rules.game import EndingKind
from arbiter.rules.pieces import Piece
from arbiter.rules.ranks import Side
from arbiter.storage.journal import CorruptDataError, GameStore, read_game

P = Piece.parse


def pair(attacker: str, defender: str) -> Contenders:
    return Contenders.untagged(P(attacker), P(defender))


def _game(tmp_path: Path) -> Path:
    """Four challenges; the Major and the 5-star General fall in the last two."""
    with GameStore(tmp_path) as store:
        store.accept(pair("W:COL", "B:PVT"))  # line 2
        store.accept(pair("W:LTC", "B:SGT"))  # line 3
        store.accept(pair("W:COL", "B:MAJ"))  # line 4
        store.accept(pair("W:SPY", "B:5*G"))  # line 5
    return tmp_path / "games" / "000001.jsonl"


def _damage(path: Path, *line_numbers: int) -> bytes:
    lines = path.read_bytes().splitlines(keepends=True)
    for n in line_numbers:
        lines[n - 1] = lines[n - 1].replace(b'"W:', b'"w:', 1)  # checksum no longer fits
    data = b"".join(lines)
    path.write_bytes(data)
    return data


def test_damage_middle_line_keeps_every_later_challenge(tmp_path: Path) -> None:
    path = _game(tmp_path)
    original = _damage(path, 3)
    with GameStore(tmp_path, repair=True) as store:
        game = store.current
        assert [c.number for c in game.challenges] == [1, 3, 4]
        assert game.unreadable == [2]
        assert game.challenge_count == 4
        # the pieces eliminated after the damage stay eliminated
        assert [str(p) for p in game.eliminated(Side.BLACK)] == ["B:PVT", "B:MAJ", "B:5*G"]
        with pytest.raises(EliminatedPieceError):
            store.accept(pair("B:5*G", "W:CPT"))
        assert len(store.problems) == 1
        problem = store.problems[0]
        assert str(path) in problem and "line 3" in problem
        assert "unreadable challenge(s): 2" in problem
        assert store.accept(pair("W:COL", "B:CPT")).number == 5
        view = game.public_view()
        assert view["challenge_count"] == 5 and view["unreadable"] == [2]
        assert [v["number"] for v in view["verdicts"]] == [1, 3, 4, 5]
    # the damaged original is kept byte for byte
    saved = list(path.parent.glob("000001.jsonl.corrupt-*"))
    assert len(saved) == 1 and saved[0].read_bytes() == original
    # the repair is durable and told once
    with GameStore(tmp_path) as store:
        assert store.problems == []
        assert store.current.unreadable == [2] and store.current.challenge_count == 5
        store.declare_end(EndingKind.DRAW, None)
    record = read_game(tmp_path, 1).full_record()
    assert record["unreadable"] == [2] and record["challenge_count"] == 5
    assert [c["number"] for c in record["challenges"]] == [1, 3, 4, 5]


def test_damage_without_repair_names_the_line_and_touches_nothing(tmp_path: Path) -> None:
    path = _game(tmp_path)
    before = _damage(path, 3)
    with pytest.raises(CorruptDataError) as info:
        GameStore(tmp_path)
    assert "line 3" in str(info.value)
    assert info.value.valid is not None and info.value.valid.challenge_count == 4
    assert path.read_bytes() == before


def test_damage_two_lines_and_a_last_line(tmp_path: Path) -> None:
    path = _game(tmp_path)
    _damage(path, 2, 3, 5)
    with GameStore(tmp_path, repair=True) as store:
        assert [c.number for c in store.current.challenges] == [3]
        assert store.current.unreadable == [1, 2, 4]
        assert store.accept(pair("W:COL", "B:CPT")).number == 5


def test_damage_lost_newline_merges_two_lines_into_two_unreadable(tmp_path: Path) -> None:
    path = _game(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[1] = lines[1].rstrip(b"\n")  # lines 2 and 3 run together
    path.write_bytes(b"".join(lines))
    with GameStore(tmp_path, repair=True) as store:
        assert store.current.unreadable == [1, 2]
        assert [c.number for c in store.current.challenges] == [3, 4]


def test_damage_before_a_declared_ending_counts_as_a_challenge(tmp_path: Path) -> None:
    path = _game(tmp_path)
    with GameStore(tmp_path) as store:
        store.declare_end(EndingKind.RESIGNATION, Side.WHITE)
    _damage(path, 5)
    with pytest.raises(CorruptDataError):  # read-only readers leave repair to the store
        read_game(tmp_path, 1)
    with GameStore(tmp_path, repair=True) as store:
        assert store.current.over and store.current.unreadable == [4]
    game = read_game(tmp_path, 1)
    assert game.over and game.unreadable == [4]
    assert game.full_record()["unreadable"] == [4]


def test_damage_header_keeps_the_challenges(tmp_path: Path) -> None:
    path = _game(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"garbage\n" + b"".join(lines[1:]))
    with GameStore(tmp_path, repair=True) as store:
        assert store.current.id == 1
        assert store.current.challenge_count == 4 and store.current.unreadable == []
        assert store.problems and "line 1" in store.problems[0]
    with GameStore(tmp_path) as store:
        assert store.current.challenge_count == 4


def test_damage_crlf_file_is_read_whole(tmp_path: Path) -> None:
    path = _game(tmp_path)
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))  # saved on another computer
    with GameStore(tmp_path) as store:  # not damage: no repair needed
        assert store.problems == []
        assert [c.number for c in store.current.challenges] == [1, 2, 3, 4]
        assert store.accept(pair("W:COL", "B:CPT")).number == 5
    with GameStore(tmp_path) as store:
        assert store.current.challenge_count == 5 and store.problems == []
