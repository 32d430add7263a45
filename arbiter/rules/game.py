"""A game's record: accepted challenges, at most one ending, and two views.

The public view holds no rank and is safe to show while the game is on; the
full record holds every rank and is refused while the game is *sealed*: while it
is on, and, for a game abandoned by NEW GAME with challenges played, until the
next game has begun (players who go on after a mistaken NEW GAME must not play
with their ranks known).
"""

from __future__ import annotations

import enum
from collections import Counter
from dataclasses import dataclass, field

from arbiter.rules.contenders import Contenders
from arbiter.rules.errors import (
    EliminatedPieceError,
    EndingError,
    GameOverError,
    GameRecordError,
    RecordSealedError,
    SameSideError,
    SameTagError,
)
from arbiter.rules.jsondata import JsonDict
from arbiter.rules.pieces import Piece
from arbiter.rules.ranks import Rank, Side
from arbiter.rules.verdict import Role, Verdict, resolve


class EndingKind(enum.Enum):
    """How a game ended. Only FLAG_CAPTURED is seen by the device itself."""

    FLAG_CAPTURED = "flag_captured"
    FLAG_HOME = "flag_home"
    RESIGNATION = "resignation"
    DRAW = "draw"
    ABANDONED = "abandoned"  # a NEW GAME started before this one ended

    @property
    def declarable(self) -> bool:
        """Endings players declare on the button, page or command line."""
        return self in (EndingKind.FLAG_HOME, EndingKind.RESIGNATION, EndingKind.DRAW)

    @property
    def has_winner(self) -> bool:
        return self in (EndingKind.FLAG_CAPTURED, EndingKind.FLAG_HOME, EndingKind.RESIGNATION)


@dataclass(frozen=True)
class Challenge:
    """One accepted challenge, numbered from 1 within its game."""

    number: int
    contenders: Contenders
    verdict: Verdict
    at: float

    @property
    def attacker(self) -> Piece:
        return self.contenders.attacker.piece

    @property
    def defender(self) -> Piece:
        return self.contenders.defender.piece

    @property
    def attacker_tag(self) -> str | None:
        return self.contenders.attacker.tag

    @property
    def defender_tag(self) -> str | None:
        return self.contenders.defender.tag

    def piece(self, role: Role) -> Piece:
        return self.contenders.piece(role)

    def tag(self, role: Role) -> str | None:
        return self.contenders.tag(role)

    @property
    def eliminated(self) -> tuple[Piece, ...]:
        return tuple(self.piece(role) for role in self.verdict.eliminated)


@dataclass(frozen=True)
class Ending:
    """How and when a game ended; ``winner`` is None for a draw or abandoned game."""

    kind: EndingKind
    winner: Side | None
    at: float

    def __post_init__(self) -> None:
        if self.kind.has_winner and self.winner is None:
            raise EndingError(f"a {self.kind.value} ending needs a winning side")
        if not self.kind.has_winner and self.winner is not None:
            raise EndingError(f"a {self.kind.value} ending has no winner")

    def to_dict(self) -> JsonDict:
        return {
            "kind": self.kind.value,
            "winner": self.winner.letter if self.winner else None,
            "at": self.at,
        }


@dataclass
class Game:
    """The in-memory record of one game. Mutated only through :meth:`apply`."""

    id: int
    started_at: float
    challenges: list[Challenge] = field(default_factory=list)
    ending: Ending | None = None
    #: Numbers of challenges that happened but whose record could not be read
    #: back (a damaged journal line): counted, but their pieces are unknown.
    unreadable: list[int] = field(default_factory=list)
    #: The tournament's assignment this game was started with (round, board and
    #: the players' names, as the hub sent it), or None: names, never ranks.
    assignment: JsonDict | None = None
    #: When an abandoned game was released for its reveal (the next game began), or None.
    revealed_at: float | None = None

    @property
    def over(self) -> bool:
        return self.ending is not None

    @property
    def abandoned(self) -> bool:
        return self.ending is not None and self.ending.kind is EndingKind.ABANDONED

    @property
    def sealed(self) -> bool:
        """True while its ranks stay secret: the game is on, or it was abandoned with
        challenges played and the next game has not begun (:meth:`reveal` not called)."""
        if self.ending is None:
            return True
        return self.abandoned and self.challenge_count > 0 and self.revealed_at is None

    def reveal(self, at: float) -> None:
        """The next game has begun: this abandoned game's record may be shown.

        :raises EndingError: not an abandoned game, or revealed already.
        """
        if not self.abandoned:
            raise EndingError(f"game {self.id} was not abandoned: nothing to reveal")
        if self.revealed_at is not None:
            raise EndingError(f"game {self.id} is revealed already")
        self.revealed_at = at

    @property
    def challenge_count(self) -> int:
        """Challenges so far, the unreadable ones included."""
        return len(self.challenges) + len(self.unreadable)

    def add_unreadable(self, number: int) -> None:
        """Count a challenge whose record was lost; ``number`` must be the next one."""
        if number != self.challenge_count + 1:
            raise GameRecordError(f"unreadable challenge {number} out of sequence")
        self.unreadable.append(number)

    def eliminated(self, side: Side) -> list[Piece]:
        """Pieces of ``side`` eliminated so far, in order."""
        return [p for c in self.challenges for p in c.eliminated if p.side is side]

    def _eliminated_tags(self) -> set[str]:
        tags: set[str] = set()
        for c in self.challenges:
            for role in c.verdict.eliminated:
                tag = c.tag(role)
                if tag is not None:
                    tags.add(tag)
        return tags

    def check(self, contenders: Contenders) -> Verdict:
        """The verdict this challenge would get, or the reason it is refused.

        :raises ChallengeRefusedError: (a subclass naming the reason).
        """
        attacker, defender = contenders.attacker, contenders.defender
        if self.over:
            raise GameOverError(f"game {self.id} is over")
        if attacker.tag is not None and attacker.tag == defender.tag:
            raise SameTagError(f"tag {attacker.tag} read in both slots")
        if attacker.piece.side is defender.piece.side:
            raise SameSideError(
                f"{attacker.piece} and {defender.piece} are both {attacker.piece.side.title}"
            )
        gone_tags = self._eliminated_tags()
        for identity in (attacker, defender):
            if identity.tag is not None and identity.tag in gone_tags:
                raise EliminatedPieceError(
                    f"{identity.piece} (tag {identity.tag}) was eliminated earlier"
                )
        gone = Counter(
            p for side in (attacker.piece.side, defender.piece.side) for p in self.eliminated(side)
        )
        for piece in (attacker.piece, defender.piece):
            if gone[piece] >= piece.rank.count:
                raise EliminatedPieceError(
                    f"all {piece.rank.count} {piece} of the army were eliminated earlier"
                )
        return resolve(attacker.piece.rank, defender.piece.rank)

    def apply(self, challenge: Challenge) -> None:
        """Add an accepted challenge; a fallen Flag ends the game."""
        self.challenges.append(challenge)
        fallen = challenge.verdict.fallen_flag
        if fallen is not None:
            loser = challenge.piece(fallen).side
            self.ending = Ending(EndingKind.FLAG_CAPTURED, loser.opponent, challenge.at)

    def end(self, ending: Ending) -> None:
        """Record a declared ending.

        :raises EndingError: if the game is already over.
        """
        if self.over:
            raise EndingError(f"game {self.id} is already over")
        self.ending = ending

    def public_view(self) -> JsonDict:
        """What anyone may see during the game: no rank, no tag."""
        return {
            "id": self.id,
            "started_at": self.started_at,
            "over": self.over,
            "challenge_count": self.challenge_count,
            # Damaged records: the page may say a challenge happened but not how it went.
            "unreadable": list(self.unreadable),
            "eliminated": {side.letter: len(self.eliminated(side)) for side in Side},
            "verdicts": [
                {
                    "number": c.number,
                    "attacker_side": c.attacker.side.letter,
                    "result": c.verdict.survivor.public_word,
                    "at": c.at,
                }
                for c in self.challenges
            ],
            "ending": self.ending.to_dict() if self.ending else None,
            "assignment": self.assignment,
        }

    def full_record(self) -> JsonDict:
        """Every challenge with its ranks, the survivors and the fallen.

        :raises RecordSealedError: while the game is :attr:`sealed`.
        """
        if not self.over:
            raise RecordSealedError(f"game {self.id} is still on: ranks stay secret")
        if self.sealed:
            raise RecordSealedError(f"game {self.id} was abandoned: its ranks stay secret "
                                    "until the next game has begun")
        record = self.public_view()
        record["challenges"] = [
            {
                "number": c.number,
                "attacker": str(c.attacker),
                "defender": str(c.defender),
                "attacker_tag": c.attacker_tag,
                "defender_tag": c.defender_tag,
                "survivor": c.verdict.survivor.value,
                "fallen_flag": c.verdict.fallen_flag.value if c.verdict.fallen_flag else None,
                "at": c.at,
            }
            for c in self.challenges
        ]
        record["fallen"] = {s.letter: [str(p) for p in self.eliminated(s)] for s in Side}
        record["survivors"] = {s.letter: [str(p) for p in survivors(self, s)] for s in Side}
        return record


def survivors(game: Game, side: Side) -> list[Piece]:
    """The pieces of ``side`` still on the board (a full army less the fallen)."""
    gone = Counter(game.eliminated(side))
    left: list[Piece] = []
    for rank in Rank:
        piece = Piece(side, rank)
        left.extend([piece] * max(0, rank.count - gone[piece]))
    return left

