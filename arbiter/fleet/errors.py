"""Errors of arbiter.fleet: each derives from ArbiterError."""

from __future__ import annotations

from arbiter.errors import ArbiterError
from arbiter.storage.journal import StoreError


class AssignmentMessageError(ArbiterError, ValueError):
    """An assignment payload that cannot be used; the table keeps the one it had."""


class CursorError(StoreError):
    """The cursor file is damaged: the table will not guess its sequence numbers."""


class ResendError(ArbiterError, ValueError):
    """A resend payload that cannot be used: the table ignores it (logged)."""


class SettingsError(ArbiterError, ValueError):
    """A tournament setting that cannot be used; the message names it."""
