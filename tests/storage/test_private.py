"""The data directory is private: ranks are secret during a game (issue 8, item 7)."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from arbiter.rules.army import PhysicalPiece
from arbiter.rules.contenders import Contenders
from arbiter.rules.pieces import Piece
from arbiter.storage.journal import GameStore
from arbiter.storage.registry import TagRegistry


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    old = os.umask(0o022)  # the common default, which made 0644 files before
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_private_new_data_directory_and_files(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with GameStore(data) as store:
        store.accept(Contenders.untagged(Piece.parse("W:COL"), Piece.parse("B:MAJ")))
        store.new_game()
    TagRegistry.in_directory(data).enroll("62E3086CED", PhysicalPiece.parse("W:5*G"))
    assert mode(data) == 0o700 and mode(data / "games") == 0o700
    files = [p for p in data.rglob("*") if p.is_file()]
    assert {p.name for p in files} >= {".lock", "tags.json", "000001.jsonl", "000002.jsonl"}
    assert {p.name: mode(p) for p in files} == {p.name: 0o600 for p in files}


def test_private_aside_copies_of_damaged_files(tmp_path: Path) -> None:
    with GameStore(tmp_path) as store:
        store.accept(Contenders.untagged(Piece.parse("W:COL"), Piece.parse("B:MAJ")))
    path = tmp_path / "games" / "000001.jsonl"
    path.write_bytes(path.read_bytes().replace(b'"W:', b'"w:') + b'{"t":"chall')
    with GameStore(tmp_path, repair=True):
        pass
    copies = list(path.parent.glob("000001.jsonl.*"))
    assert copies and all(mode(p) == 0o600 for p in copies)
    assert mode(path) == 0o600


def test_private_existing_loose_directory_is_tightened_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with GameStore(tmp_path):
        pass
    games = tmp_path / "games"
    os.chmod(tmp_path, 0o755)
    os.chmod(games, 0o755)
    os.chmod(games / "000001.jsonl", 0o644)
    (tmp_path / "tags.json").write_text('{"format": "gg-arbiter-tags", "version": 1, "tags": {}}')
    os.chmod(tmp_path / "tags.json", 0o644)
    with caplog.at_level(logging.WARNING), GameStore(tmp_path):
        pass
    assert mode(tmp_path) == 0o700 and mode(games) == 0o700
    assert mode(games / "000001.jsonl") == 0o600 and mode(tmp_path / "tags.json") == 0o600
    said = [r.getMessage() for r in caplog.records if "made private" in r.getMessage()]
    assert len(said) == 1 and "0755" in said[0] and "2 file(s)" in said[0]
    caplog.clear()
    with caplog.at_level(logging.WARNING), GameStore(tmp_path):
        pass
    assert not [r for r in caplog.records if "made private" in r.getMessage()]
