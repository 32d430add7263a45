"""Pieces (side and rank) and their text form, ``W:5*G`` or ``B:SPY``."""

from __future__ import annotations

import re
from dataclasses import dataclass

from arbiter.rules.errors import PieceError
from arbiter.rules.ranks import Rank, Side


def _fold(text: str) -> str:
    return re.sub(r"[\s_\-.]+", " ", text.strip().lower())


def _aliases() -> dict[str, Rank]:
    table: dict[str, Rank] = {}
    for rank in Rank:
        table[_fold(rank.code)] = rank
        table[_fold(rank.full_name)] = rank
        table[_fold(rank.name)] = rank
    stars = {
        Rank.GENERAL_OF_THE_ARMY: ("five", "5"),
        Rank.GENERAL: ("four", "4"),
        Rank.LIEUTENANT_GENERAL: ("three", "3"),
        Rank.MAJOR_GENERAL: ("two", "2"),
        Rank.BRIGADIER_GENERAL: ("one", "1"),
    }
    for rank, (word, digit) in stars.items():
        for prefix in (word, digit):
            for suffix in ("star general", "star", "stars general", "stars"):
                table[_fold(f"{prefix} {suffix}")] = rank
        table[_fold(f"{digit}g")] = rank
        table[_fold(f"{digit}*")] = rank
    extra = {
        "general of the army": Rank.GENERAL_OF_THE_ARMY,
        "lt general": Rank.LIEUTENANT_GENERAL,
        "lieutenant colonel": Rank.LIEUTENANT_COLONEL,
        "lt colonel": Rank.LIEUTENANT_COLONEL,
        "lt col": Rank.LIEUTENANT_COLONEL,
        "col": Rank.COLONEL,
        "colonel": Rank.COLONEL,
        "major": Rank.MAJOR,
        "captain": Rank.CAPTAIN,
        "capt": Rank.CAPTAIN,
        "first lieutenant": Rank.FIRST_LIEUTENANT,
        "1st lieutenant": Rank.FIRST_LIEUTENANT,
        "1st lt": Rank.FIRST_LIEUTENANT,
        "second lieutenant": Rank.SECOND_LIEUTENANT,
        "2nd lieutenant": Rank.SECOND_LIEUTENANT,
        "2nd lt": Rank.SECOND_LIEUTENANT,
        "sergeant": Rank.SERGEANT,
        "sarge": Rank.SERGEANT,
        "private": Rank.PRIVATE,
        "pte": Rank.PRIVATE,
        "pvt": Rank.PRIVATE,
        "spy": Rank.SPY,
        "agent": Rank.SPY,
        "flag": Rank.FLAG,
        "flg": Rank.FLAG,
    }
    table.update({_fold(k): v for k, v in extra.items()})
    return table


_RANK_ALIASES = _aliases()

_SIDE_ALIASES: dict[str, Side] = {
    "w": Side.WHITE,
    "white": Side.WHITE,
    "b": Side.BLACK,
    "black": Side.BLACK,
}


def parse_rank(text: str) -> Rank:
    """Read a rank from its code (any case) or a common name.

    :raises PieceError: for anything that is not a rank.
    """
    rank = _RANK_ALIASES.get(_fold(text))
    if rank is None:
        raise PieceError(text, "unknown rank")
    return rank


def parse_side(text: str) -> Side:
    """Read a side: ``W``, ``B``, ``white`` or ``black`` (any case).

    :raises PieceError: for anything else.
    """
    side = _SIDE_ALIASES.get(text.strip().lower())
    if side is None:
        raise PieceError(text, "unknown side (use W or B)")
    return side


@dataclass(frozen=True, order=False)
class Piece:
    """One side's piece of one rank; its text form is ``W:5*G``."""

    side: Side
    rank: Rank

    def __str__(self) -> str:
        return f"{self.side.letter}:{self.rank.code}"

    @classmethod
    def parse(cls, text: str) -> Piece:
        """Read ``SIDE:RANK`` (``w:spy``, ``Black:Private``).

        :raises PieceError: naming the bad token.
        """
        if ":" not in text:
            raise PieceError(text, "a piece is SIDE:RANK, e.g. W:5*G")
        side_text, _, rank_text = text.partition(":")
        return cls(parse_side(side_text), parse_rank(rank_text))


def all_pieces() -> list[Piece]:
    """The 30 distinct pieces (2 sides x 15 ranks), White first."""
    return [Piece(side, rank) for side in Side for rank in Rank]
