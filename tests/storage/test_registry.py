"""Physical pieces and the tag registry (tags.json)."""

from __future__ import annotations

import json
import os
import stat
from collections import Counter
from pathlib import Path

import pytest

from arbiter.rules.army import PhysicalPiece, all_physical_pieces
from arbiter.rules.errors import PieceError
from arbiter.rules.pieces import Piece
from arbiter.rules.ranks import Rank, Side
from arbiter.storage.errors import (
    InvalidTagError,
    PieceAlreadyEnrolledError,
    RegistryCorruptError,
    TagAlreadyEnrolledError,
)
from arbiter.storage.registry import FILENAME, TagRegistry, normalize_tag

TAG = "62E3086CED"
OTHER = "100086F444"


def pp(text: str) -> PhysicalPiece:
    return PhysicalPiece.parse(text)


@pytest.fixture
def registry(tmp_path: Path) -> TagRegistry:
    return TagRegistry.in_directory(tmp_path)


# -- physical pieces -----------------------------------------------------------


def test_physical_pieces_are_42_distinct() -> None:
    pieces = all_physical_pieces()
    assert len(pieces) == 42
    assert len(set(pieces)) == 42
    assert len({str(p) for p in pieces}) == 42


def test_physical_pieces_count_each_rank_per_side() -> None:
    counts = Counter((p.side, p.rank) for p in all_physical_pieces())
    for side in Side:
        for rank in Rank:
            assert counts[(side, rank)] == rank.count


def test_physical_pieces_order_is_white_first_in_rank_order() -> None:
    names = [str(p) for p in all_physical_pieces()]
    assert names[:2] == ["W:5*G", "W:4*G"]
    assert names[12:21] == [f"W:PVT#{n}" for n in range(1, 7)] + ["W:SPY#1", "W:SPY#2", "W:FLG"]
    assert names[21] == "B:5*G"
    assert [p.order for p in all_physical_pieces()] == list(range(42))


@pytest.mark.parametrize("piece", all_physical_pieces(), ids=str)
def test_physical_piece_text_round_trips(piece: PhysicalPiece) -> None:
    assert PhysicalPiece.parse(str(piece)) == piece


def test_physical_piece_parse_accepts_number_on_single_rank_and_any_case() -> None:
    assert pp("w:5*g#1") == pp("W:5*G")
    assert pp("b:pvt#4") == PhysicalPiece(Piece(Side.BLACK, Rank.PRIVATE), 4)


@pytest.mark.parametrize("text", ["W:PVT", "W:PVT#7", "W:PVT#0", "W:5*G#2", "W:SPY#x", "X:5*G"])
def test_physical_piece_parse_rejects(text: str) -> None:
    with pytest.raises(PieceError):
        PhysicalPiece.parse(text)


def test_physical_piece_rejects_number_out_of_range() -> None:
    with pytest.raises(ValueError):
        PhysicalPiece(Piece(Side.WHITE, Rank.SPY), 3)


# -- the registry ----------------------------------------------------------------


def test_registry_missing_file_is_empty(registry: TagRegistry, tmp_path: Path) -> None:
    assert registry.path == tmp_path / FILENAME
    assert len(registry) == 0
    assert registry.lookup(TAG) is None
    assert registry.pieces_missing() == all_physical_pieces()


def test_registry_enroll_then_lookup(registry: TagRegistry) -> None:
    registry.enroll(TAG, pp("W:5*G"))
    assert registry.lookup(TAG) == Piece.parse("W:5*G")
    assert registry.lookup_physical(TAG) == pp("W:5*G")
    assert registry.tag_of(pp("W:5*G")) == TAG
    assert TAG in registry


def test_registry_normalises_tags_to_upper_case(registry: TagRegistry) -> None:
    registry.enroll(" 62e3086ced ", pp("B:FLG"))
    assert registry.lookup("62E3086CED") == Piece.parse("B:FLG")
    assert registry.lookup("62e3086ced") == Piece.parse("B:FLG")
    assert registry.items() == [(TAG, pp("B:FLG"))]


@pytest.mark.parametrize("bad", ["", "xyz", "62E3086CE G", "1", "0" * 41])
def test_registry_rejects_malformed_tag(registry: TagRegistry, bad: str) -> None:
    with pytest.raises(InvalidTagError):
        registry.enroll(bad, pp("W:5*G"))
    assert registry.lookup(bad) is None


def test_normalize_tag_accepts_other_reader_id_lengths() -> None:
    assert normalize_tag("04a1b2c3") == "04A1B2C3"  # a 4-byte MIFARE UID


def test_registry_persists_across_instances(registry: TagRegistry, tmp_path: Path) -> None:
    registry.enroll(TAG, pp("W:PVT#3"))
    registry.enroll(OTHER, pp("B:SPY#2"))
    again = TagRegistry(tmp_path / FILENAME)
    assert again.items() == registry.items()
    document = json.loads((tmp_path / FILENAME).read_text())
    assert document["tags"] == {TAG: "W:PVT#3", OTHER: "B:SPY#2"}


def test_registry_refuses_tag_enrolled_to_another_piece(registry: TagRegistry) -> None:
    registry.enroll(TAG, pp("W:5*G"))
    with pytest.raises(TagAlreadyEnrolledError) as info:
        registry.enroll(TAG, pp("B:5*G"))
    assert info.value.other == pp("W:5*G")
    assert "W:5*G" in str(info.value)
    assert registry.lookup(TAG) == Piece.parse("W:5*G")


def test_registry_enrolling_same_tag_to_same_piece_is_a_no_op(registry: TagRegistry) -> None:
    registry.enroll(TAG, pp("W:5*G"))
    mtime = registry.path.stat().st_mtime_ns
    registry.enroll(TAG.lower(), pp("W:5*G"))
    assert registry.path.stat().st_mtime_ns == mtime
    assert len(registry) == 1


def test_registry_refuses_second_tag_for_a_piece(registry: TagRegistry) -> None:
    registry.enroll(TAG, pp("W:PVT#1"))
    with pytest.raises(PieceAlreadyEnrolledError):
        registry.enroll(OTHER, pp("W:PVT#1"))
    assert registry.lookup(OTHER) is None


def test_registry_plain_piece_takes_next_free_instance(registry: TagRegistry) -> None:
    private = Piece.parse("W:PVT")
    tags = [f"00000000{n:02X}" for n in range(6)]
    enrolled = [registry.enroll(tag, private) for tag in tags]
    assert [str(p) for p in enrolled] == [f"W:PVT#{n}" for n in range(1, 7)]
    assert registry.enroll(tags[2], private) == pp("W:PVT#3")  # already that private
    with pytest.raises(PieceAlreadyEnrolledError):
        registry.enroll("00000000FF", private)  # a seventh private


def test_registry_reenroll_replaces_the_old_tag(registry: TagRegistry) -> None:
    registry.enroll(TAG, pp("B:SPY#1"))
    assert registry.reenroll(pp("B:SPY#1"), OTHER) == TAG
    assert registry.lookup(TAG) is None
    assert registry.lookup_physical(OTHER) == pp("B:SPY#1")
    assert TagRegistry(registry.path).tag_of(pp("B:SPY#1")) == OTHER


def test_registry_reenroll_refuses_tag_of_another_piece(registry: TagRegistry) -> None:
    registry.enroll(TAG, pp("B:SPY#1"))
    registry.enroll(OTHER, pp("B:SPY#2"))
    with pytest.raises(TagAlreadyEnrolledError):
        registry.reenroll(pp("B:SPY#1"), OTHER)
    assert registry.tag_of(pp("B:SPY#1")) == TAG


def test_registry_forget(registry: TagRegistry) -> None:
    registry.enroll(TAG, pp("W:FLG"))
    assert registry.forget(TAG.lower()) == pp("W:FLG")
    assert registry.forget(TAG) is None
    assert TagRegistry(registry.path).lookup(TAG) is None
    registry.enroll(TAG, pp("B:FLG"))  # the tag is free again


def test_registry_pieces_missing_in_guided_order(registry: TagRegistry) -> None:
    registry.enroll(TAG, pp("W:4*G"))
    registry.enroll(OTHER, pp("B:PVT#2"))
    missing = registry.pieces_missing()
    assert len(missing) == 40
    assert missing[:2] == [pp("W:5*G"), pp("W:3*G")]
    assert pp("B:PVT#2") not in missing
    assert missing == sorted(missing, key=lambda p: p.order)


def test_registry_enrolls_all_42_pieces(registry: TagRegistry) -> None:
    for n, piece in enumerate(all_physical_pieces()):
        registry.enroll(f"{n:010X}", piece)
    assert registry.pieces_missing() == []
    assert len(TagRegistry(registry.path)) == 42


def test_registry_write_is_atomic_when_replace_fails(
    registry: TagRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry.enroll(TAG, pp("W:5*G"))
    before = registry.path.read_bytes()

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        registry.enroll(OTHER, pp("W:4*G"))
    assert registry.path.read_bytes() == before
    assert registry.lookup(OTHER) is None  # memory matches the disk
    assert sorted(p.name for p in tmp_path.iterdir()) == [FILENAME]  # no temp file left


def test_registry_write_fsyncs_file_and_directory(
    registry: TagRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[str] = []
    real_fsync = os.fsync

    def recording_fsync(fd: int) -> None:
        mode = os.fstat(fd).st_mode
        synced.append("dir" if stat.S_ISDIR(mode) else "file")
        real_fsync(fd)

    order: list[str] = []
    real_replace = os.replace

    def recording_replace(src: str, dst: str) -> None:
        order.append(f"replace after {len(synced)} fsync")
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    monkeypatch.setattr(os, "replace", recording_replace)
    registry.enroll(TAG, pp("W:5*G"))
    assert synced == ["file", "dir"]
    assert order == ["replace after 1 fsync"]


def test_registry_creates_missing_data_directory(tmp_path: Path) -> None:
    registry = TagRegistry.in_directory(tmp_path / "new" / "data")
    registry.enroll(TAG, pp("W:5*G"))
    assert (tmp_path / "new" / "data" / FILENAME).exists()


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        "",
        "[]",
        '{"format": "something-else", "version": 1, "tags": {}}',
        '{"format": "gg-arbiter-tags", "version": 99, "tags": {}}',
        '{"format": "gg-arbiter-tags", "version": 1, "tags": []}',
        '{"format": "gg-arbiter-tags", "version": 1, "tags": {"62E3086CED": "W:KING"}}',
        '{"format": "gg-arbiter-tags", "version": 1, "tags": {"62E3086CED": 5}}',
        '{"format": "gg-arbiter-tags", "version": 1, "tags": {"zz": "W:5*G"}}',
        '{"format": "gg-arbiter-tags", "version": 1, "tags": {"62E3086CED": "W:PVT"}}',
        '{"format": "gg-arbiter-tags", "version": 1,'
        ' "tags": {"62E3086CED": "W:5*G", "100086F444": "W:5*G"}}',
        '{"format": "gg-arbiter-tags", "version": 1,'
        ' "tags": {"62E3086CED": "W:5*G", "62e3086ced": "B:5*G"}}',
    ],
)
def test_registry_corrupt_file_raises_naming_path(tmp_path: Path, content: str) -> None:
    path = tmp_path / FILENAME
    path.write_text(content)
    with pytest.raises(RegistryCorruptError) as info:
        TagRegistry(path)
    assert str(path) in str(info.value)
    assert info.value.path == path
    assert path.read_text() == content  # never reset


def test_registry_corrupt_binary_file_raises(tmp_path: Path) -> None:
    path = tmp_path / FILENAME
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(RegistryCorruptError, match=str(path)):
        TagRegistry(path)


def test_registry_reload_sees_changes_from_another_instance(
    registry: TagRegistry, tmp_path: Path
) -> None:
    other = TagRegistry(registry.path)
    other.enroll(TAG, pp("W:5*G"))
    assert registry.lookup(TAG) is None
    registry.reload()
    assert registry.lookup(TAG) == Piece.parse("W:5*G")
