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


class NoLegalPairingError(PairingError):
    """No pairing of the round keeps the Dutch system's absolute criteria (C1-C4).

    The organiser pairs such a round by hand; the rules are never relaxed silently.
    """

    def __init__(self, round_number: int, reason: str) -> None:
        super().__init__(f"round {round_number}: no legal pairing: {reason}")
        self.round = round_number
        self.reason = reason


class EventTooLargeError(PairingError):
    """An event with more players than a Swiss pairing can hold in this machine's memory:
    refused before any of it is built (see swiss.PAIRING_MEMORY)."""

    def __init__(
        self, players: int, needed_mb: int, limit_mb: int, most: int, ran_out: bool = False
    ) -> None:
        if ran_out:  # the pairing process's address space, not the estimate, said so
            text = (f"{players} players: pairing them ran out of the {limit_mb} MB the"
                    f" pairing process may use; a Swiss round pairs at most {most} players")
        else:
            text = (f"{players} players: pairing them would take about {needed_mb} MB, more"
                    f" than the {limit_mb} MB allowed; a Swiss round pairs at most {most}"
                    " players")
        super().__init__(text)
        self.players = players
        self.needed_mb = needed_mb
        self.limit_mb = limit_mb
        self.most = most
        self.ran_out = ran_out


class TrfError(TournamentError, ValueError):
    """A TRF file that cannot be read or an event that cannot be written as one."""


class PlayerNameError(TournamentError, ValueError):
    """A player's name that the tables, the pages or a TRF file could not show as it is
    (control or invisible characters, too long for TRF's field); see names.py."""
