"""The fifteen ranks of a Game of the Generals army and the two sides."""

from __future__ import annotations

import enum


class Side(enum.Enum):
    """The two armies. Their letters are the prefix of a piece in text."""

    WHITE = "W"
    BLACK = "B"

    @property
    def letter(self) -> str:
        return self.value

    @property
    def title(self) -> str:
        return self.name.capitalize()

    @property
    def opponent(self) -> Side:
        return Side.BLACK if self is Side.WHITE else Side.WHITE


class Rank(enum.Enum):
    """A rank: its code (as in RULES.md), full name and count per army.

    Members are declared from the strongest officer down, then Private, Spy
    and Flag; :attr:`order` is that position.
    """

    GENERAL_OF_THE_ARMY = ("5*G", "General of the Army", 1)
    GENERAL = ("4*G", "General", 1)
    LIEUTENANT_GENERAL = ("3*G", "Lieutenant General", 1)
    MAJOR_GENERAL = ("2*G", "Major General", 1)
    BRIGADIER_GENERAL = ("1*G", "Brigadier General", 1)
    COLONEL = ("COL", "Colonel", 1)
    LIEUTENANT_COLONEL = ("LTC", "Lieutenant Colonel", 1)
    MAJOR = ("MAJ", "Major", 1)
    CAPTAIN = ("CPT", "Captain", 1)
    FIRST_LIEUTENANT = ("1LT", "First Lieutenant", 1)
    SECOND_LIEUTENANT = ("2LT", "Second Lieutenant", 1)
    SERGEANT = ("SGT", "Sergeant", 1)
    PRIVATE = ("PVT", "Private", 6)
    SPY = ("SPY", "Spy", 2)
    FLAG = ("FLG", "Flag", 1)

    def __init__(self, code: str, full_name: str, count: int) -> None:
        self.code = code
        self.full_name = full_name
        self.count = count

    @property
    def order(self) -> int:
        """Position in the table, 0 for the General of the Army."""
        return _ORDER[self]

    @property
    def is_officer(self) -> bool:
        """True for 5*G down to SGT."""
        return self.order <= Rank.SERGEANT.order

    @classmethod
    def from_code(cls, code: str) -> Rank:
        """The rank with this exact code (``"5*G"``); KeyError otherwise."""
        return _BY_CODE[code]


_BY_CODE: dict[str, Rank] = {rank.code: rank for rank in Rank}
_ORDER: dict[Rank, int] = {rank: i for i, rank in enumerate(Rank)}

#: Pieces in one army: 21.
ARMY_SIZE: int = sum(rank.count for rank in Rank)
