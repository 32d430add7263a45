"""What can go wrong in the hub."""

from __future__ import annotations

from arbiter.errors import ArbiterError


class HubError(ArbiterError):
    """A hub operation cannot be done as asked."""


class ContradictingEventError(HubError, ValueError):
    """An event for a (table, seq) already held, with a different payload."""


class RatingError(HubError, ValueError):
    """A player's rating outside 0 to :data:`arbiter.hub.ledger.MAX_RATING`."""


class UnknownPairingError(HubError, LookupError):
    """No pairing with this round and board."""


class TableAssignmentError(HubError, ValueError):
    """A table cannot take this pairing (it already has another board of the round)."""


class ArchiveError(HubError, ValueError):
    """An event archive that cannot be imported (bad format, or a ledger not empty)."""


class LoneSurrogateError(HubError, ValueError):
    """Text with half a UTF-16 pair (a lone surrogate): no SQLite file, CSV or page can
    hold it, so the ledger refuses it whole, whichever way it came (API, form, command
    line, MQTT)."""


class LedgerEventError(HubError, ValueError):
    """The ledger belongs to another event than the one asked for."""


class ExportError(HubError, ValueError):
    """No such export (kind or format)."""


class IngestError(HubError):
    """The broker cannot be reached, or did not take a message in time."""


class OrganiserInputError(HubError, ValueError):
    """An organiser's form or API body that does not name what the action needs."""


class NotSentError(HubError, RuntimeError):
    """An assignment stored in the ledger that the broker did not take."""


class AssignmentRefusedError(HubError, ValueError):
    """Some boards of a round could not be assigned as asked (the rest were)."""


class UnplayedRoundError(HubError, ValueError):
    """A forfeit or a bye that cannot be recorded as asked (a bye's board, a round already
    paired, a withdrawn player, a bye held twice)."""


class EventLengthError(HubError, ValueError):
    """The event's length (its announced number of rounds) refuses this: a round past it,
    or a length below the rounds already paired or beyond any event's."""


class RecordRefusedError(HubError, ValueError):
    """A table's record past what the ledger keeps of one table (its count or bytes, or
    records of games the ledger does not know): refused and noted, never stored."""
