"""Errors of arbiter.rules: each derives from ArbiterError."""

from __future__ import annotations

from arbiter.errors import ArbiterError


class GameRecordError(ArbiterError):
    """Base of the game record's errors."""


class ChallengeRefusedError(GameRecordError):
    """A challenge that cannot be accepted; nothing was recorded.

    ``public_reason`` never names a rank and may be shown during a game; the
    exception's message may name pieces and is for the admin and debug logs.
    """

    public_reason = "challenge refused"


class SameSideError(ChallengeRefusedError):
    """Both slots hold pieces of the same side."""

    public_reason = "both pieces are of the same side"


class SameTagError(ChallengeRefusedError):
    """The same tagged piece reads in both slots: a misread, not a challenge."""

    public_reason = "the same piece reads in both slots (misread)"


class EliminatedPieceError(ChallengeRefusedError):
    """A piece that left the board earlier (or one more of a rank than an army has)."""

    public_reason = "a piece in the slots was already eliminated"


class GameOverError(ChallengeRefusedError):
    """The game has ended: no more challenges."""

    public_reason = "the game is over"


class EndingError(GameRecordError):
    """A declared ending that cannot be recorded (game already over, bad winner)."""


class WrongGameError(EndingError):
    """An ending declared for a game that is not the current one."""


class RecordSealedError(GameRecordError):
    """The full record (with ranks) is asked for while the game is on."""


class KeyCodeError(ArbiterError, ValueError):
    """A key code configuration cannot identify all 30 pieces."""


class UnknownKeyError(ArbiterError, LookupError):
    """A token is not the codeword of any piece (unused, wrong weight or malformed)."""

    def __init__(self, token: str, reason: str) -> None:
        super().__init__(f"{reason}: {token!r}")
        self.token = token


class PieceError(ArbiterError, ValueError):
    """A rank or piece could not be read from text; names the bad token."""

    def __init__(self, token: str, reason: str) -> None:
        super().__init__(f"{reason}: {token!r}")
        self.token = token
