"""The data directory's lock: one gg-arbiter per directory at a time.

``DATA/.lock`` held with ``flock``: the arbiter's :class:`~arbiter.storage.journal.GameStore`
takes it for as long as it runs, and a command beside it (``end``, ``selftest``,
``enroll``, ``monitor``) takes it to learn whether an arbiter runs and to keep one
from starting meanwhile. The kernel drops it when the holder dies, kill -9 included.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from arbiter.storage.errors import StoreError, StoreLockedError
from arbiter.storage.paths import PRIVATE_FILE_MODE

LOCK_NAME = ".lock"


class DataDirLock:
    """The held lock of one data directory; :meth:`release` (or ``with``) gives it back."""

    def __init__(self, data_dir: Path, fd: int) -> None:
        self.data_dir = data_dir
        self._fd = fd

    @classmethod
    def take(cls, data_dir: str | os.PathLike[str], *, create: bool = True) -> DataDirLock | None:
        """Take the lock of ``data_dir`` without waiting.

        ``create=False`` (a command beside the arbiter) never creates the lock file: one
        made by root through sudo would keep the service's own account out; with no lock
        file no arbiter has used the directory, and None is returned.

        :raises StoreLockedError: another process holds it (the running arbiter).
        :raises StoreError: the lock file cannot be opened (``__cause__`` says why,
            e.g. ``PermissionError`` for another account's directory).
        """
        path = Path(data_dir)
        flags = os.O_RDWR | (os.O_CREAT if create else 0)
        try:
            fd = os.open(path / LOCK_NAME, flags, PRIVATE_FILE_MODE)
        except FileNotFoundError as exc:
            if not create:
                return None
            raise StoreError(f"cannot use data directory {path}: {exc}") from exc
        except OSError as exc:
            raise StoreError(f"cannot use data directory {path}: {exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise StoreLockedError(
                f"data directory {path} is in use by another gg-arbiter"
            ) from None
        return cls(path, fd)

    @property
    def held(self) -> bool:
        return self._fd >= 0

    def release(self) -> None:
        """Give the lock back; safe to call twice."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> DataDirLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
