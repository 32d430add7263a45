"""Durability of the game journal: reopen, kill -9, torn writes, corruption."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from arbiter.rules.contenders import Contenders, Identity
from arbiter.rules.errors import EndingError, RecordSealedError, SameSideError
from arbiter.rules.game import EndingKind
from arbiter.rules.pieces import Piece
from arbiter.rules.ranks import Side
from arbiter.storage.journal import (
    CorruptDataError,
    GameStore,
    StoreError,
    StoreLockedError,
    UnknownGameError,
    list_game_ids,
    read_game,
)

P = Piece.parse


def pair(attacker: str, defender: str, a_tag: str | None = None,
         d_tag: str | None = None) -> Contenders:
    return Contenders(Identity(P(attacker), a_tag), Identity(P(defender), d_tag))


def test_journal_first_start_opens_game_one(tmp_path: Path) -> None:
    with GameStore(tmp_path) as store:
        assert store.current.id == 1
        assert not store.current.over
    assert list_game_ids(tmp_path) == [1]


def test_journal_reopen_resumes_open_game(tmp_path: Path) -> None:
    with GameStore(tmp_path) as store:
        store.accept(pair("W:SPY", "B:5*G", "T1", "T2"))
        store.accept(pair("B:PVT", "W:SPY"))
    with GameStore(tmp_path) as store:
        game = store.current
        assert game.id == 1
        assert [(str(c.attacker), str(c.defender)) for c in game.challenges] == [
            ("W:SPY", "B:5*G"),
            ("B:PVT", "W:SPY"),
        ]
        assert game.challenges[0].attacker_tag == "T1"
        # the reopened game still refuses what it refused before
        with pytest.raises(SameSideError):
            store.accept(pair("W:COL", "W:MAJ"))
        assert store.accept(pair("W:COL", "B:MAJ")).number == 3


def test_journal_contenders_round_trip_with_their_tags(tmp_path: Path) -> None:
    contenders = pair("B:PVT", "W:SPY", "BBBB", None)
    with GameStore(tmp_path) as store:
        accepted = store.accept(contenders)
    with GameStore(tmp_path) as store:
        assert store.current.challenges == [accepted]
        assert store.current.challenges[0].contenders == contenders
    assert read_game(tmp_path, 1).challenges[0].contenders == contenders


def test_journal_challenge_line_keeps_its_format(tmp_path: Path) -> None:
    import json
    import zlib

    with GameStore(tmp_path) as store:
        accepted = store.accept(pair("W:SPY", "B:5*G", "T1", "T2"))
    line = (tmp_path / "games" / "000001.jsonl").read_bytes().splitlines()[1].decode()
    body, crc = line.split("\t")
    assert crc == f"{zlib.crc32(body.encode()):08x}"
    expected = {
        "t": "challenge",
        "n": 1,
        "at": accepted.at,
        "attacker": "W:SPY",
        "defender": "B:5*G",
        "attacker_tag": "T1",
        "defender_tag": "T2",
        "survivor": "attacker",  # the Spy eliminates every officer up to 5*G
        "fallen_flag": None,
    }
    assert body == json.dumps(expected, separators=(",", ":"), sort_keys=True)


def test_journal_refused_challenge_writes_nothing(tmp_path: Path) -> None:
    with GameStore(tmp_path) as store:
        path = tmp_path / "games" / "000001.jsonl"
        size = path.stat().st_size
        with pytest.raises(SameSideError):
            store.accept(pair("W:COL", "W:MAJ"))
        assert path.stat().st_size == size


def test_journal_flag_ending_and_new_game(tmp_path: Path) -> None:
    with GameStore(tmp_path) as store:
        store.accept(pair("W:PVT", "B:FLG"))
        assert store.current.over
        with pytest.raises(EndingError):
            store.declare_end(EndingKind.DRAW, None)
        game = store.new_game()
        assert game.id == 2
    with GameStore(tmp_path) as store:
        assert store.current.id == 2
        old = store.get(1)
        assert old.ending is not None and old.ending.winner is Side.WHITE
        assert old.full_record()["challenges"][0]["defender"] == "B:FLG"


def test_journal_new_game_abandons_open_game(tmp_path: Path) -> None:
    with GameStore(tmp_path) as store:
        store.accept(pair("W:COL", "B:MAJ"))
        store.new_game()
    game = read_game(tmp_path, 1)
    assert game.ending is not None and game.ending.kind is EndingKind.ABANDONED


def test_journal_declared_endings_persist(tmp_path: Path) -> None:
    with GameStore(tmp_path) as store:
        store.declare_end(EndingKind.FLAG_HOME, Side.BLACK)
        with pytest.raises(EndingError):
            store.declare_end(EndingKind.FLAG_CAPTURED, Side.BLACK)
    game = read_game(tmp_path, 1)
    assert game.ending is not None
    assert (game.ending.kind, game.ending.winner) == (EndingKind.FLAG_HOME, Side.BLACK)


def test_journal_full_record_refused_while_on(tmp_path: Path) -> None:
    with GameStore(tmp_path) as store:
        store.accept(pair("W:COL", "B:MAJ"))
        with pytest.raises(RecordSealedError):
            store.get(1).full_record()


def test_journal_unknown_game(tmp_path: Path) -> None:
    with GameStore(tmp_path) as store, pytest.raises(UnknownGameError):
        store.get(42)


def test_journal_one_writer_at_a_time(tmp_path: Path) -> None:
    with GameStore(tmp_path), pytest.raises(StoreLockedError):
        GameStore(tmp_path)


def test_journal_torn_tail_is_set_aside_not_counted(tmp_path: Path) -> None:
    with GameStore(tmp_path) as store:
        store.accept(pair("W:COL", "B:MAJ"))
    path = tmp_path / "games" / "000001.jsonl"
    with path.open("ab") as f:
        f.write(b'{"t":"challenge","n":2,"attack')  # a write cut off by a power loss
    with GameStore(tmp_path) as store:
        assert len(store.current.challenges) == 1
        assert store.problems and "unfinished write" in store.problems[0]
        assert store.accept(pair("W:COL", "B:LTC")).number == 2
    assert list((tmp_path / "games").glob("000001.jsonl.torn-*"))
    assert len(read_game(tmp_path, 1).challenges) == 2


def _corrupt_second_challenge(tmp_path: Path) -> Path:
    with GameStore(tmp_path) as store:
        store.accept(pair("W:COL", "B:MAJ"))
        store.accept(pair("W:COL", "B:LTC"))
        store.accept(pair("W:COL", "B:CPT"))
    path = tmp_path / "games" / "000001.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b"B:LTC", b"B:1LT")  # a flipped byte: checksum no longer fits
    path.write_bytes(b"".join(lines))
    return path


def test_journal_corrupt_file_named_and_untouched(tmp_path: Path) -> None:
    path = _corrupt_second_challenge(tmp_path)
    before = path.read_bytes()
    with pytest.raises(CorruptDataError) as info:
        GameStore(tmp_path)
    assert str(path) in str(info.value)
    assert "line 3" in str(info.value)
    valid = info.value.valid
    assert valid is not None and [c.number for c in valid.challenges] == [1, 3]
    assert valid.unreadable == [2]
    assert path.read_bytes() == before


def test_journal_repair_keeps_valid_prefix_and_original(tmp_path: Path) -> None:
    path = _corrupt_second_challenge(tmp_path)
    before = path.read_bytes()
    with GameStore(tmp_path, repair=True) as store:
        assert [c.number for c in store.current.challenges] == [1, 3]
        assert str(path) in store.problems[0]
        assert store.accept(pair("W:COL", "B:1LT")).number == 4
    saved = list((tmp_path / "games").glob("000001.jsonl.corrupt-*"))
    assert len(saved) == 1 and saved[0].read_bytes() == before


def test_journal_garbage_file_with_repair_starts_next_game(tmp_path: Path) -> None:
    games = tmp_path / "games"
    games.mkdir()
    (games / "000003.jsonl").write_bytes(b"\x00\xffnot a journal\n")
    with pytest.raises(CorruptDataError):
        GameStore(tmp_path)
    with GameStore(tmp_path, repair=True) as store:
        assert store.current.id == 4
    assert list(games.glob("000003.jsonl.corrupt-*"))


def _run_child_and_kill(data_dir: Path, seed: int, rng: random.Random) -> list[tuple[str, ...]]:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    child = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("journal_child.py")), str(data_dir),
         str(seed)],
        stdout=subprocess.PIPE,
        env=env,
    )
    assert child.stdout is not None
    first = child.stdout.readline()  # wait until it is writing
    time.sleep(rng.uniform(0.0, 0.15))
    child.send_signal(signal.SIGKILL)
    rest = child.stdout.read()
    child.wait()
    reports = (first + rest).decode().splitlines()
    return [tuple(line.split()) for line in reports if line.endswith(" end")]


def test_journal_survives_kill_9(tmp_path: Path) -> None:
    rng = random.Random(1980)
    reported: dict[tuple[int, int], tuple[str, str]] = {}
    kills = 30
    for round_no in range(kills):
        for fields in _run_child_and_kill(tmp_path, round_no, rng):
            if fields[0] == "ok":
                reported[(int(fields[1]), int(fields[2]))] = (fields[3], fields[4])
        # after every kill, the store opens cleanly and holds every report
        with GameStore(tmp_path) as store:
            assert not any("line" in p for p in store.problems), store.problems
            for (game_id, number), (attacker, defender) in reported.items():
                game = store.get(game_id)
                assert len(game.challenges) >= number
                challenge = game.challenges[number - 1]
                assert (str(challenge.attacker), str(challenge.defender)) == (attacker, defender)
    assert len(reported) > kills  # the child got real work done between kills


def test_journal_new_game_failure_keeps_old_game_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import arbiter.storage.journal as journal

    with GameStore(tmp_path) as store:
        store.accept(pair("W:COL", "B:MAJ"))

        def full_disk(path: Path, payload: bytes) -> None:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(journal, "write_durably", full_disk)
        with pytest.raises(StoreError):
            store.new_game()
        assert store.current.id == 1 and not store.current.over
        assert store.accept(pair("W:COL", "B:CPT")).number == 2  # still recording
    assert list_game_ids(tmp_path) == [1]
    assert not list((tmp_path / "games").glob("*.tmp"))


def test_journal_new_game_rolls_back_when_old_game_cannot_be_ended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with GameStore(tmp_path) as store:
        store.accept(pair("W:COL", "B:MAJ"))
        real_append = store._append

        def append(fd: int, payload: bytes) -> None:
            if b'"abandoned"' in payload:
                raise StoreError("disk full")
            real_append(fd, payload)

        monkeypatch.setattr(store, "_append", append)
        with pytest.raises(StoreError):
            store.new_game()
        assert store.current.id == 1 and not store.current.over
        monkeypatch.undo()
        assert store.accept(pair("W:COL", "B:CPT")).number == 2
    assert list_game_ids(tmp_path) == [1]
