"""What can go wrong with the data directory and the game journals in it."""

from __future__ import annotations

from pathlib import Path

from arbiter.errors import ArbiterError
from arbiter.rules.game import Game


class StoreError(ArbiterError):
    """The data directory cannot be used (unwritable, locked by another process)."""


class StoreLockedError(StoreError):
    """Another process holds the data directory."""


class CorruptDataError(StoreError):
    """A journal line failed its check; names the file and line.

    ``valid`` is the game as far as the file is intact, or None when even
    its header is damaged.
    """

    def __init__(self, path: Path, line: int, reason: str, valid: Game | None) -> None:
        super().__init__(f"{path}: line {line}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason
        self.valid = valid


class UnknownGameError(StoreError):
    """No game with this id in the data directory."""
