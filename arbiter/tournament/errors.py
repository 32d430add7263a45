"""What can go wrong when running a tournament."""

from __future__ import annotations

from arbiter.errors import ArbiterError


class TournamentError(ArbiterError):
    """A tournament operation cannot be done as asked."""


class DuplicatePlayerError(TournamentError, ValueError):
    """Two players with the same name (names identify players at the tables)."""


class UnknownPlayerError(TournamentError, LookupError):
    """A name that is not one of the event's players."""


class PairingError(TournamentError):
    """No pairing satisfies the rules (every opponent already met, every player had a bye)."""


class PlayerImportError(TournamentError, ValueError):
    """A players CSV file that cannot be read; names the line."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason
