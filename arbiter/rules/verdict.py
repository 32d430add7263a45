"""Who survives a challenge: the rules of RULES.md as one function."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from arbiter.rules.ranks import Rank


class Role(enum.Enum):
    """Which slot a piece is in: the challenger or the challenged."""

    ATTACKER = "attacker"
    DEFENDER = "defender"


class Survivor(enum.Enum):
    """The public outcome of a challenge."""

    ATTACKER = "attacker"
    DEFENDER = "defender"
    NONE = "none"

    @property
    def public_word(self) -> str:
        """``attacker``, ``defender`` or ``split``, as the status API says it."""
        return "split" if self is Survivor.NONE else self.value


@dataclass(frozen=True)
class Verdict:
    """The result of one challenge.

    ``fallen_flag`` names the slot whose Flag was eliminated (the game is
    then over and that Flag's side lost), or is None.
    """

    survivor: Survivor
    fallen_flag: Role | None = None

    @property
    def flag_fell(self) -> bool:
        return self.fallen_flag is not None

    @property
    def eliminated(self) -> tuple[Role, ...]:
        """The slots whose pieces leave the board."""
        if self.survivor is Survivor.ATTACKER:
            return (Role.DEFENDER,)
        if self.survivor is Survivor.DEFENDER:
            return (Role.ATTACKER,)
        return (Role.ATTACKER, Role.DEFENDER)


def _beats(winner: Rank, loser: Rank) -> bool:
    """True when ``winner`` eliminates ``loser`` (ranks differ, no Flag vs Flag)."""
    if loser is Rank.FLAG:
        return True
    if winner is Rank.FLAG:
        return False
    if winner is Rank.SPY:
        return loser.is_officer
    if loser is Rank.SPY:
        return winner is Rank.PRIVATE
    if loser is Rank.PRIVATE:
        return winner.is_officer
    if winner is Rank.PRIVATE:
        return False
    return winner.order < loser.order


def resolve(attacker: Rank, defender: Rank) -> Verdict:
    """Decide a challenge between the attacker's and the defender's rank."""
    if attacker is Rank.FLAG and defender is Rank.FLAG:
        return Verdict(Survivor.ATTACKER, fallen_flag=Role.DEFENDER)
    if attacker is defender:
        return Verdict(Survivor.NONE)
    if _beats(attacker, defender):
        flag = Role.DEFENDER if defender is Rank.FLAG else None
        return Verdict(Survivor.ATTACKER, fallen_flag=flag)
    flag = Role.ATTACKER if attacker is Rank.FLAG else None
    return Verdict(Survivor.DEFENDER, fallen_flag=flag)
