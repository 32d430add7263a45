"""The journal's durability promise, checked at the system-call level.

A spy wraps ``os.write``, ``os.fsync`` and ``os.replace`` and notes which file each
call touched (through ``/proc/self/fd``). The promise: an accepted challenge's line
is written and then fsynced on the same file before ``accept`` returns; a whole
file (a new game's header, a repaired journal) is fsynced before it is renamed
into place, and its directory after.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arbiter.rules.contenders import Contenders
from arbiter.rules.errors import EndingError
from arbiter.rules.game import EndingKind
from arbiter.rules.pieces import Piece
from arbiter.rules.ranks import Side
from arbiter.storage.journal import GameStore

Call = tuple[str, str]  # (operation, path of the file or directory it touched)


def _path_of(fd: int) -> str:
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return f"fd:{fd}"


@pytest.fixture
def syscalls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Call]]:
    calls: list[Call] = []
    real_write, real_fsync, real_replace = os.write, os.fsync, os.replace

    def spy_write(fd: int, data: Any) -> int:
        calls.append(("write", _path_of(fd)))
        return real_write(fd, data)

    def spy_fsync(fd: int) -> None:
        calls.append(("fsync", _path_of(fd)))
        real_fsync(fd)

    def spy_replace(src: Any, dst: Any, **kw: Any) -> None:
        calls.append(("replace", f"{os.fspath(src)} -> {os.fspath(dst)}"))
        real_replace(src, dst, **kw)

    monkeypatch.setattr(os, "write", spy_write)
    monkeypatch.setattr(os, "fsync", spy_fsync)
    monkeypatch.setattr(os, "replace", spy_replace)
    yield calls


def _journal(data: Path, game_id: int) -> str:
    return str((data / "games" / f"{game_id:06d}.jsonl").resolve())


def _after(calls: list[Call], index: int, op: str, path: str) -> bool:
    return (op, path) in calls[index + 1 :]


def test_journal_fsync_accept_syncs_the_line_before_returning(
    tmp_path: Path, syscalls: list[Call]
) -> None:
    store = GameStore(tmp_path)
    try:
        for attacker, defender in [("W:COL", "B:MAJ"), ("B:SPY", "W:5*G"), ("W:PVT", "B:SPY")]:
            syscalls.clear()
            store.accept(Contenders.untagged(Piece.parse(attacker), Piece.parse(defender)))
            journal = _journal(tmp_path, 1)
            writes = [i for i, c in enumerate(syscalls) if c == ("write", journal)]
            assert writes, f"accept wrote nothing to {journal}: {syscalls}"
            # The last byte written must be followed by an fsync of that same file.
            assert _after(syscalls, writes[-1], "fsync", journal), syscalls
    finally:
        store.close()


def _assert_whole_file_durable(calls: list[Call], target: str, tmp: str = "") -> None:
    tmp = tmp or target + ".tmp"
    replaced = [i for i, c in enumerate(calls) if c[0] == "replace" and c[1].endswith(target)]
    assert replaced, f"{target} was not renamed into place: {calls}"
    i = replaced[-1]
    before = calls[:i]
    written = [j for j, c in enumerate(before) if c == ("write", tmp)]
    assert written, f"nothing written to {tmp}: {calls}"
    assert _after(before, written[-1], "fsync", tmp), f"{tmp} renamed before fsync: {calls}"
    assert _after(calls, i, "fsync", str(Path(target).parent)), (
        f"directory of {target} not fsynced after the rename: {calls}"
    )


def test_journal_fsync_new_game_file_synced_before_rename(
    tmp_path: Path, syscalls: list[Call]
) -> None:
    store = GameStore(tmp_path)
    try:
        _assert_whole_file_durable(syscalls, _journal(tmp_path, 1))
        syscalls.clear()
        store.new_game()
        new = _journal(tmp_path, 2)
        # Staged under a name no reader lists, synced, then renamed into place...
        _assert_whole_file_durable(syscalls, new + ".pending", new + ".pending.tmp")
        # ...only after the old game's ending is durable: a reader that sees game 2
        # always finds game 1 over (issue 19: its ending was published never).
        old = _journal(tmp_path, 1)
        into_place = max(i for i, c in enumerate(syscalls) if c[0] == "replace"
                         and c[1].endswith(" -> " + new))
        ended = [i for i, c in enumerate(syscalls[:into_place]) if c == ("write", old)]
        assert ended, f"game 1 not ended before game 2 appeared: {syscalls}"
        assert _after(syscalls[:into_place], ended[-1], "fsync", old), syscalls
        assert _after(syscalls, into_place, "fsync", str(Path(new).parent)), syscalls
    finally:
        store.close()


def test_journal_fsync_repaired_file_synced_before_rename(
    tmp_path: Path, syscalls: list[Call]
) -> None:
    with GameStore(tmp_path) as store:
        store.accept(Contenders.untagged(Piece.parse("W:COL"), Piece.parse("B:MAJ")))
        store.accept(Contenders.untagged(Piece.parse("B:COL"), Piece.parse("W:MAJ")))
    path = Path(_journal(tmp_path, 1))
    lines = path.read_bytes().splitlines(keepends=True)
    lines[1] = lines[1].replace(b"COL", b"CXL")  # the CRC no longer matches
    path.write_bytes(b"".join(lines))
    syscalls.clear()
    with GameStore(tmp_path, repair=True) as store:
        assert store.problems
    _assert_whole_file_durable(syscalls, str(path))


def test_journal_fsync_tag_registry_written_durably(
    tmp_path: Path, syscalls: list[Call]
) -> None:
    from arbiter.rules.army import PhysicalPiece
    from arbiter.storage.registry import TagRegistry

    TagRegistry.in_directory(tmp_path).enroll("62E3086CED", PhysicalPiece.parse("W:COL#1"))
    _assert_whole_file_durable(syscalls, str((tmp_path / "tags.json").resolve()))


def test_journal_fsync_admin_file_written_durably(tmp_path: Path, syscalls: list[Call]) -> None:
    # set-pin rewrites admin.json: a power cut just after it must keep the new PIN.
    from web.kit import auth

    auth.set_pin(tmp_path, "482913")
    _assert_whole_file_durable(syscalls, str((tmp_path / auth.ADMIN_FILE).resolve()))


def test_append_listeners_are_told_only_after_the_append_is_fsynced(
    tmp_path: Path, syscalls: list[Call]
) -> None:
    """The broker's outbox hears of an append (challenge, ending, new game) only once the
    journal holds it durably: after the fsync of the file written (and of the directory
    that names a new journal), never before; once per game touched."""
    store = GameStore(tmp_path)
    store.appends.add(lambda game_id: syscalls.append(("told", str(game_id))))
    try:
        syscalls.clear()
        store.accept(Contenders.untagged(Piece.parse("W:COL"), Piece.parse("B:MAJ")))
        journal = _journal(tmp_path, 1)
        told = syscalls.index(("told", "1"))
        assert ("fsync", journal) in syscalls[:told] and ("told", "1") not in syscalls[told + 1:]

        syscalls.clear()  # game 1 is on: NEW GAME ends it (abandoned), then game 2
        store.new_game()
        assert [c for c in syscalls if c[0] == "told"] == [("told", "1"), ("told", "2")]
        before = syscalls[:syscalls.index(("told", "1"))]
        assert ("fsync", _journal(tmp_path, 1)) in before
        assert ("fsync", str((tmp_path / "games").resolve())) in before  # game 2 named

        syscalls.clear()
        store.declare_end(*_resignation())
        told = syscalls.index(("told", "2"))
        assert ("fsync", _journal(tmp_path, 2)) in syscalls[:told]
    finally:
        store.close()


def test_append_listeners_hear_nothing_the_disk_refused(tmp_path: Path) -> None:
    told: list[int] = []
    store = GameStore(tmp_path)
    store.appends.add(told.append)
    try:
        with pytest.raises(EndingError):  # not declarable: nothing written
            store.declare_end(EndingKind.FLAG_CAPTURED, Side.WHITE)
        store.appends.remove(told.append)
        store.accept(Contenders.untagged(Piece.parse("W:COL"), Piece.parse("B:MAJ")))
        assert told == []
    finally:
        store.close()


def _resignation() -> tuple[EndingKind, Side]:
    return EndingKind.RESIGNATION, Side.BLACK
