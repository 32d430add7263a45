"""The data directory's lock: one holder at a time, and a probe that never creates it."""

from __future__ import annotations

from pathlib import Path

import pytest

from arbiter.storage.datalock import LOCK_NAME, DataDirLock
from arbiter.storage.errors import StoreLockedError
from arbiter.storage.journal import GameStore


def test_datalock_second_holder_refused_until_released(tmp_path: Path) -> None:
    first = DataDirLock.take(tmp_path)
    assert first is not None and first.held
    with pytest.raises(StoreLockedError):
        DataDirLock.take(tmp_path)
    first.release()
    first.release()  # twice is harmless
    again = DataDirLock.take(tmp_path)
    assert again is not None and again.held
    again.release()


def test_datalock_probe_never_creates_the_lock_file(tmp_path: Path) -> None:
    assert DataDirLock.take(tmp_path, create=False) is None
    assert not (tmp_path / LOCK_NAME).exists()


def test_datalock_is_the_one_the_game_store_holds(tmp_path: Path) -> None:
    with GameStore(tmp_path), pytest.raises(StoreLockedError):
        DataDirLock.take(tmp_path, create=False)
    probe = DataDirLock.take(tmp_path, create=False)
    assert probe is not None  # released with the store
    probe.release()
