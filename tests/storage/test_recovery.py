"""Start-up finishes what a NEW GAME cut short began (issue 8, item 5)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from arbiter.rules.contenders import Contenders
from arbiter.rules.game import EndingKind
from arbiter.rules.pieces import Piece
from arbiter.storage.codec import encode, header_record
from arbiter.storage.journal import GameStore, list_game_ids, read_game

P = Piece.parse


def pair(attacker: str, defender: str) -> Contenders:
    return Contenders.untagged(P(attacker), P(defender))


def _kill_inside_new_game(data: Path, when: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    child = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("new_game_child.py")), str(data), when],
        capture_output=True, env=env, timeout=60, check=False,
    )
    assert child.returncode == -9, child.stderr.decode()
    return child.stdout.decode()


@pytest.mark.parametrize("when", ["ending", "rename"])
def test_recovery_kill_9_inside_new_game_never_leaves_an_open_game_behind_a_newer(
    tmp_path: Path, when: str
) -> None:
    # Issue 19: NEW GAME used to make the new journal before it ended the old game, so a
    # reader (the broker's outbox) could find game 2 while game 1 was still open, and a
    # kill there left game 1 open behind game 2. Now game 2 appears only after game 1's
    # ending is durable: killed at either inner moment, game 2 was never listed.
    assert _kill_inside_new_game(tmp_path, when).split() == ["killed", "False"]
    assert list_game_ids(tmp_path) == [1]
    ended = read_game(tmp_path, 1).ending
    # Killed before the ending: nothing changed. After it: game 1 is abandoned, still current.
    if when == "ending":
        assert ended is None
    else:
        assert ended is not None and ended.kind is EndingKind.ABANDONED
    with GameStore(tmp_path) as store:
        assert store.current.id == 1
        assert store.current.challenge_count == 1
        # the staged journal was a NEW GAME never acknowledged: removed, its number reused
        assert not list((tmp_path / "games").glob("*.pending*"))
        assert store.new_game().id == 2
        assert store.get(1).ending is not None
        # Abandoned with a challenge played: secret until game 2 begins (issue 27 item 9).
        assert store.sealed == (1,)
        store.accept(pair("B:SPY", "W:5*G"))
        assert store.get(1).full_record()["challenges"][0]["attacker"] == "W:COL"


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
        # Up to the ending: game 1's reveal line (game 2 began) goes with it.
        lines = path.read_bytes().splitlines(keepends=True)
        path.write_bytes(b"".join(ln for ln in lines if b'"t":"end"' not in ln
                                  and b'"t":"reveal"' not in ln))
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
        # Game 2 was played after game 1: game 1 is revealed at once; game 4, after game 3,
        # has not begun: game 3 stays secret (issue 27 item 9).
        assert not store.get(1).sealed
        assert store.sealed == (3,)


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
