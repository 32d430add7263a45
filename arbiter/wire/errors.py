"""Errors of the wire format: each derives from ArbiterError."""

from __future__ import annotations

from arbiter.errors import ArbiterError


class WireFormatError(ArbiterError, ValueError):
    """A message that does not follow the wire format; ``seq`` is its event number when
    one could be read (for the hub's note of the refusal)."""

    def __init__(self, reason: str, seq: int | None = None) -> None:
        super().__init__(reason)
        self.seq = seq


class TopicMismatchError(WireFormatError):
    """A message whose payload names another table (or game) than its topic."""


class PayloadTooLargeError(WireFormatError):
    """A payload over its topic's size limit, refused before parsing."""
