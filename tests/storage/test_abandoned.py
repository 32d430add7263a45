"""An abandoned game's ranks stay sealed until the next game has begun (issue 27 item 9):
the journal's ``reveal`` line, written only after the next game's first line is durable,
and what a kill -9 or a refused write in between leaves."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from arbiter.rules.contenders import Contenders, Identity
from arbiter.rules.errors import RecordSealedError
from arbiter.rules.game import EndingKind
from arbiter.rules.pieces import Piece
from arbiter.rules.ranks import Side
from arbiter.storage.journal import CorruptDataError, GameStore, StoreError, read_game
from tests.support.web import rank_leaks

ROOT = Path(__file__).resolve().parents[2]


def pair(attacker: str, defender: str) -> Contenders:
    return Contenders(Identity(Piece.parse(attacker), None), Identity(Piece.parse(defender), None))


def _abandon_one(store: GameStore) -> None:
    """Game 1: two challenges, then NEW GAME (game 2 current)."""
    store.accept(pair("W:SPY", "B:5*G"))
    store.accept(pair("B:PVT", "W:SPY"))
    store.new_game()


def _lines(data: Path, game_id: int) -> list[dict[str, object]]:
    text = (data / "games" / f"{game_id:06d}.jsonl").read_text()
    return [json.loads(line.rpartition("\t")[0]) for line in text.splitlines()]


def test_abandoned_game_sealed_until_the_next_games_first_challenge(tmp_path: Path) -> None:
    with GameStore(tmp_path) as store:
        _abandon_one(store)
        game = store.get(1)
        assert game.over and game.ending is not None
        assert game.ending.kind is EndingKind.ABANDONED
        assert game.sealed and store.sealed == (1,)
        with pytest.raises(RecordSealedError, match="abandoned"):
            game.full_record()
        assert rank_leaks(json.dumps(game.public_view())) == []
        store.accept(pair("W:COL", "B:MAJ"))  # the next game has begun
        assert not store.sealed
        revealed = store.get(1)
        assert not revealed.sealed
        assert revealed.full_record()["challenges"][0]["attacker"] == "W:SPY"
    # The reveal line comes after the abandoned game's ending, and after game 2's challenge.
    kinds = [line["t"] for line in _lines(tmp_path, 1)]
    assert kinds == ["game", "challenge", "challenge", "end", "reveal"]
    challenge_at = _lines(tmp_path, 2)[1]["at"]
    assert _lines(tmp_path, 1)[-1]["at"] == challenge_at
    assert not read_game(tmp_path, 1).sealed


def test_abandoned_game_sealed_across_a_reopen(tmp_path: Path) -> None:
    with GameStore(tmp_path) as store:
        _abandon_one(store)
    with GameStore(tmp_path) as store:
        assert store.sealed == (1,)
        assert read_game(tmp_path, 1).sealed


def test_abandoned_game_revealed_by_a_declared_ending_or_the_players_word(
    tmp_path: Path,
) -> None:
    with GameStore(tmp_path / "declared") as store:
        _abandon_one(store)
        store.declare_end(EndingKind.RESIGNATION, Side.WHITE)
        assert store.sealed == () and not store.get(1).sealed
    with GameStore(tmp_path / "word") as store:
        _abandon_one(store)
        assert store.reveal_abandoned() == [1]
        assert not store.get(1).sealed
        assert store.reveal_abandoned() == []  # nothing left sealed


def test_abandoned_games_in_a_row_wait_for_a_game_that_begins(tmp_path: Path) -> None:
    with GameStore(tmp_path) as store:
        _abandon_one(store)  # game 1 sealed
        store.new_game()  # game 2 abandoned before any challenge: nothing to hide, not begun
        assert store.sealed == (1,) and not store.get(2).sealed
    with GameStore(tmp_path) as store:
        assert store.sealed == (1,)  # found again at open, past the empty game 2
        store.accept(pair("W:2LT", "B:SGT"))  # game 3 begins
        assert not store.sealed
        store.new_game()  # game 3 abandoned in its turn: game 4 current
        assert store.sealed == (3,)
        assert [read_game(tmp_path, i).sealed for i in (1, 2, 3)] == [False, False, True]


def test_abandoned_game_normal_endings_are_never_sealed(tmp_path: Path) -> None:
    with GameStore(tmp_path) as store:
        store.accept(pair("W:PVT", "B:FLG"))  # flag captured
        store.new_game()
        store.accept(pair("W:COL", "B:MAJ"))
        store.declare_end(EndingKind.DRAW, None)
        store.new_game()
        assert store.sealed == ()
        assert store.get(1).full_record()["ending"]["kind"] == "flag_captured"
        assert store.get(2).full_record()["ending"]["kind"] == "draw"


def test_abandoned_reveal_refused_by_the_disk_stays_sealed_then_mends_at_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash (or a refused write) between the next game's first challenge and the reveal
    line: the challenge stands, the old game stays sealed, and the next start reveals it."""
    with GameStore(tmp_path) as store:
        _abandon_one(store)
        real_open = os.open
        sealed_path = str(tmp_path / "games" / "000001.jsonl")

        def refuse(path: object, *args: object, **kwargs: object) -> int:
            if str(path) == sealed_path:
                raise OSError(28, "No space left on device")
            return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(os, "open", refuse)
        challenge = store.accept(pair("W:COL", "B:MAJ"))  # recorded all the same
        assert challenge.number == 1 and store.sealed == (1,)
        with pytest.raises(StoreError):
            store.reveal_abandoned()
        monkeypatch.setattr(os, "open", real_open)
    assert read_game(tmp_path, 1).sealed
    with GameStore(tmp_path) as store:  # game 2 has begun: mended at once
        assert store.sealed == ()
    assert not read_game(tmp_path, 1).sealed


CHILD = """
import sys
from arbiter.rules.contenders import Contenders
from arbiter.rules.pieces import Piece
from arbiter.storage.journal import GameStore
store = GameStore(sys.argv[1])
store.accept(Contenders.untagged(Piece.parse("W:SPY"), Piece.parse("B:5*G")))
store.new_game()
print("abandoned", flush=True)
sys.stdin.read()  # held open until killed
"""


def test_abandoned_game_kill_9_between_abandonment_and_next_game(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path)], env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None
        assert child.stdout.readline().split() == [b"abandoned"]
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(30)
    assert child.returncode == -signal.SIGKILL
    with GameStore(tmp_path) as store:
        assert store.current.id == 2
        assert store.sealed == (1,)
        with pytest.raises(RecordSealedError):
            store.get(1).full_record()
        store.accept(pair("B:COL", "W:MAJ"))
        assert store.get(1).full_record()["challenges"][0]["defender"] == "B:5*G"


def test_abandoned_reveal_line_where_it_does_not_belong_is_damage(tmp_path: Path) -> None:
    """A reveal line in a game not abandoned (or twice) is a damaged line: it reveals
    nothing; repair keeps the game, without it."""
    from arbiter.storage.codec import encode, reveal_record

    with GameStore(tmp_path) as store:
        store.accept(pair("W:SPY", "B:5*G"))
    path = tmp_path / "games" / "000001.jsonl"
    with path.open("ab") as f:
        f.write(encode(reveal_record(5.0)))
    with pytest.raises(CorruptDataError, match="not abandoned"):
        read_game(tmp_path, 1)
    with GameStore(tmp_path, repair=True) as store:
        assert store.current.id == 1 and not store.current.over
        assert store.current.challenge_count == 2  # the damaged line counted as lost
        assert store.current.sealed


def test_abandoned_repair_keeps_the_reveal(tmp_path: Path) -> None:
    """A damaged revealed game rewritten by repair keeps its reveal line."""
    from arbiter.storage.codec import records_of

    with GameStore(tmp_path) as store:
        _abandon_one(store)
        store.accept(pair("W:COL", "B:MAJ"))
    kinds = [r["t"] for r in records_of(read_game(tmp_path, 1))]
    assert kinds == ["game", "challenge", "challenge", "end", "reveal"]
