"""Start-up finishes what a NEW GAME cut short began (issue 8, item 5)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from arbiter.rules.contenders import Contenders
from arbiter.rules.game import EndingKind
from arbiter.rules.pieces import Piece
from arbiter.storage.codec import encode, header_record
from arbiter.storage.journal import GameStore, list_game_ids, read_game

P = Piece.parse


def pair(attacker: str, defender: str) -> Contenders:
    return Contenders.untagged(P(attacker), P(defender))


def test_recovery_kill_9_inside_new_game_ends_the_old_game(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    child = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("new_game_child.py")), str(tmp_path)],
        capture_output=True, env=env, timeout=60, check=False,
    )
    assert child.returncode == -9, child.stderr.decode()
    assert child.stdout.decode().split() == ["killed", "True"]  # died inside the window
    assert read_game(tmp_path, 1).ending is None  # the orphan the issue describes

    with GameStore(tmp_path) as store:
        assert store.current.id == 2 and not store.current.over
        old = store.get(1)
        assert old.ending is not None and old.ending.kind is EndingKind.ABANDONED
        assert old.ending.at == store.current.started_at  # when NEW GAME happened
        assert old.full_record()["challenges"][0]["attacker"] == "W:COL"  # revealable
        started = store.current.started_at
    # durable, and done once
    with GameStore(tmp_path) as store:
        assert store.current.id == 2 and store.current.started_at == started
    lines = (tmp_path / "games" / "000001.jsonl").read_bytes().splitlines()
    assert sum(b'"abandoned"' in line for line in lines) == 1


def test_recovery_every_older_open_game_is_abandoned(tmp_path: Path) -> None:
    with GameStore(tmp_path) as store:
        store.accept(pair("W:COL", "B:MAJ"))
        store.new_game()
        store.accept(pair("W:PVT", "B:FLG"))  # game 2 ends by its Flag
        store.new_game()
        store.accept(pair("W:COL", "B:MAJ"))
        store.new_game()
    games = tmp_path / "games"
    for game_id in (1, 3):  # as if both NEW GAMEs had been cut short
        path = games / f"{game_id:06d}.jsonl"
        path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:-1]))
        assert read_game(tmp_path, game_id).ending is None
    with GameStore(tmp_path) as store:
        assert store.current.id == 4
        starts = {i: store.get(i).started_at for i in (2, 4)}
        for game_id, successor in ((1, 2), (3, 4)):
            ending = store.get(game_id).ending
            assert ending is not None and ending.kind is EndingKind.ABANDONED
            assert ending.at == starts[successor]
        flag = store.get(2).ending
        assert flag is not None and flag.kind is EndingKind.FLAG_CAPTURED


def test_recovery_leftover_temp_journal_does_not_skip_a_number(tmp_path: Path) -> None:
    with GameStore(tmp_path) as store:
        store.accept(pair("W:PVT", "B:FLG"))
        game = store.current
    games = tmp_path / "games"
    # NEW GAME cut short before its rename: the header reached only the temp file
    (games / "000002.jsonl.tmp").write_bytes(encode(header_record(game)))
    with GameStore(tmp_path) as store:
        assert store.current.id == 1
        assert not list(games.glob("*.tmp"))
        assert store.new_game().id == 2
    assert list_game_ids(tmp_path) == [1, 2]


def test_recovery_temp_file_of_a_first_game_is_not_a_game(tmp_path: Path) -> None:
    games = tmp_path / "games"
    games.mkdir()
    (games / "000001.jsonl.tmp").write_bytes(b'{"t":"game"')
    with GameStore(tmp_path) as store:
        assert store.current.id == 1
    assert list_game_ids(tmp_path) == [1]
    assert not list(games.glob("*.tmp"))
