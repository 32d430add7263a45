"""Errors of arbiter.venue: each derives from ArbiterError."""

from __future__ import annotations

from arbiter.errors import ArbiterError


class BrokerConfigError(ArbiterError, ValueError):
    """The broker files cannot be written as asked."""


class JoinError(ArbiterError):
    """The venue file cannot be used, or the table's files cannot be written."""


class RehearsalError(ArbiterError):
    """A rehearsed venue cannot start, or a process or game of it failed."""
