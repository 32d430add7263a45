"""Who meets in a challenge: the two pieces in their roles, each with its tag if it has one."""

from __future__ import annotations

from dataclasses import dataclass

from arbiter.rules.pieces import Piece
from arbiter.rules.verdict import Role


@dataclass(frozen=True)
class Identity:
    """A piece and, when the reader tells pieces apart (RFID), its tag.

    Keys and the simulator name a side and rank only: ``tag`` is None.
    """

    piece: Piece
    tag: str | None = None


@dataclass(frozen=True)
class Contenders:
    """The attacker and the defender of one challenge."""

    attacker: Identity
    defender: Identity

    @classmethod
    def untagged(cls, attacker: Piece, defender: Piece) -> Contenders:
        """Two pieces that carry no tag (notched keys, the simulator)."""
        return cls(Identity(attacker), Identity(defender))

    def identity(self, role: Role) -> Identity:
        return self.attacker if role is Role.ATTACKER else self.defender

    def piece(self, role: Role) -> Piece:
        return self.identity(role).piece

    def tag(self, role: Role) -> str | None:
        return self.identity(role).tag
