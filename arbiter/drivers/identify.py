"""Turning a reader's token into a piece: key codewords, enrolled tags, or text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from arbiter.drivers.errors import UnknownPieceError
from arbiter.rules.contenders import Identity
from arbiter.rules.errors import PieceError, UnknownKeyError
from arbiter.rules.keycode import DEFAULT_KEYCODE, KeyCode
from arbiter.rules.pieces import Piece

if TYPE_CHECKING:
    from arbiter.storage.registry import TagRegistry

# Identity is the rules' value; the device imports it from here, beside the identifiers.
__all__ = [
    "Identity",
    "KeyIdentifier",
    "PieceIdentifier",
    "TagIdentifier",
    "TextIdentifier",
    "UnknownPieceError",
]


class PieceIdentifier(Protocol):
    """Maps a reader's token to an :class:`Identity`; raises :class:`UnknownPieceError`."""

    def identify(self, token: str) -> Identity: ...


class KeyIdentifier:
    """Notched keys: a codeword names a side and rank, not one physical piece."""

    def __init__(self, keycode: KeyCode = DEFAULT_KEYCODE) -> None:
        self.keycode = keycode

    def identify(self, token: str) -> Identity:
        try:
            return Identity(self.keycode.piece(token))
        except UnknownKeyError:
            raise UnknownPieceError(f"codeword {token} is not in the key table") from None


class TagIdentifier:
    """RFID: an enrolled tag names one physical piece; the tag tells it apart."""

    def __init__(self, registry: TagRegistry) -> None:
        self.registry = registry

    def identify(self, token: str) -> Identity:
        piece = self.registry.lookup(token)
        if piece is None:
            # Tags may have been enrolled by `gg-arbiter enroll` since: read the file again.
            self.registry.reload()
            piece = self.registry.lookup(token)
        if piece is None:
            raise UnknownPieceError(f"tag {token} is not enrolled")
        return Identity(piece, token.upper())


class TextIdentifier:
    """The simulator: the token is the piece's text, ``W:5*G``."""

    def identify(self, token: str) -> Identity:
        try:
            return Identity(Piece.parse(token))
        except PieceError as exc:
            raise UnknownPieceError(str(exc)) from None
