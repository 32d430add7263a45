"""Errors of web.table: each derives from ArbiterError."""

from __future__ import annotations

from arbiter.errors import ArbiterError


class AdminInputError(ArbiterError, ValueError):
    """A declared ending or enrollment request that does not make sense."""
