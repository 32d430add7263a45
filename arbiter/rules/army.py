"""Physical pieces: the 42 real pieces of a set, each a piece plus an instance number.

A set holds six White Privates that play alike but are six objects, each with
its own tag. :class:`PhysicalPiece` names one of them: ``W:PVT#3``. Ranks with
one piece per army are written without a number (``W:5*G``); ``W:5*G#1`` is
read as the same piece.
"""

from __future__ import annotations

from dataclasses import dataclass

from arbiter.rules.errors import PieceError
from arbiter.rules.pieces import Piece
from arbiter.rules.ranks import Rank, Side


@dataclass(frozen=True)
class PhysicalPiece:
    """One real piece: ``piece`` and ``number`` (1 up to that rank's count).

    :raises ValueError: if ``number`` is outside 1..count.
    """

    piece: Piece
    number: int = 1

    def __post_init__(self) -> None:
        if not 1 <= self.number <= self.piece.rank.count:
            raise ValueError(
                f"{self.piece} has {self.piece.rank.count} piece(s) per army, not #{self.number}"
            )

    @property
    def side(self) -> Side:
        return self.piece.side

    @property
    def rank(self) -> Rank:
        return self.piece.rank

    @property
    def order(self) -> int:
        """Position in :func:`all_physical_pieces` (the guided enrollment order)."""
        return _ORDER[self]

    def __str__(self) -> str:
        if self.piece.rank.count == 1:
            return str(self.piece)
        return f"{self.piece}#{self.number}"

    @classmethod
    def parse(cls, text: str) -> PhysicalPiece:
        """Read ``W:5*G``, ``W:5*G#1`` or ``b:pvt#4``.

        :raises PieceError: for a bad piece, a missing number on a rank that has
            several pieces (``W:PVT``), or a number out of range.
        """
        piece_text, hash_sign, number_text = text.strip().partition("#")
        piece = Piece.parse(piece_text)
        if not hash_sign:
            if piece.rank.count != 1:
                raise PieceError(text, f"say which {piece.rank.code}: #1 to #{piece.rank.count}")
            return cls(piece)
        try:
            return cls(piece, int(number_text.strip()))
        except ValueError as exc:
            raise PieceError(text, f"bad piece number ({exc})") from None


def all_physical_pieces() -> list[PhysicalPiece]:
    """All 42 physical pieces: White then Black, ranks in table order, #1 first."""
    return [
        PhysicalPiece(Piece(side, rank), number)
        for side in Side
        for rank in Rank
        for number in range(1, rank.count + 1)
    ]


_ORDER: dict[PhysicalPiece, int] = {p: i for i, p in enumerate(all_physical_pieces())}
