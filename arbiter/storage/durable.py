"""Small files replaced atomically and durably (temp file, fsync, rename, fsync dir).

The one writer of every file the arbiter or the hub rewrites: game journals'
rewrites, the tag registry, the broker cursor, the assignment, the resend record
and the admin file (``admin.json``). One writer per path at a time: callers that
share a path hold their own lock.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from arbiter.storage.paths import PRIVATE_FILE_MODE


def fsync_path(path: Path) -> None:
    """fsync a file or a directory: on a directory, it makes a rename, a new entry or a
    removal in it durable (the one place the arbiter and the hub do this)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_durably(path: Path, payload: bytes, mode: int = PRIVATE_FILE_MODE) -> None:
    """Replace ``path`` with ``payload``: after a crash it holds the old bytes or the new.
    The new file has permissions ``mode`` (owner only by default).

    :raises OSError: the write failed; ``path`` is unchanged.
    """
    tmp = path.with_name(path.name + ".tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
        try:
            os.fchmod(fd, mode)  # a leftover temp file keeps its old mode otherwise
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_path(path.parent)


def remove_durably(path: Path) -> None:
    """Remove ``path`` (if there) and make the removal durable."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    fsync_path(path.parent)
