"""What can go wrong with the data directory and the game journals in it."""

from __future__ import annotations

from pathlib import Path

from arbiter.errors import ArbiterError
from arbiter.rules.army import PhysicalPiece
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


class RegistryError(ArbiterError):
    """Base of the registry's errors."""


class InvalidTagError(RegistryError, ValueError):
    """A tag id is not 2 to 40 hex digits."""


class TagAlreadyEnrolledError(RegistryError):
    """The tag already belongs to another piece; ``other`` names it."""

    def __init__(self, tag: str, other: PhysicalPiece) -> None:
        super().__init__(f"tag {tag} is already enrolled as {other}")
        self.tag = tag
        self.other = other


class PieceAlreadyEnrolledError(RegistryError):
    """The piece already has a different tag (use ``reenroll`` to replace it)."""

    def __init__(self, piece: PhysicalPiece, tag: str) -> None:
        super().__init__(f"{piece} already has tag {tag}")
        self.piece = piece
        self.tag = tag


class RegistryCorruptError(RegistryError):
    """``tags.json`` exists but cannot be read; the message names the file."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"tag registry {path} is corrupt: {reason}")
        self.path = path
        self.reason = reason
