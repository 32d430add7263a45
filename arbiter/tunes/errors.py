"""Errors of arbiter.tunes: each derives from ArbiterError."""

from __future__ import annotations

from arbiter.errors import ArbiterError


class RtttlError(ArbiterError, ValueError):
    """An RTTTL text could not be parsed.

    ``position`` is the 0-based index in the text where the bad ``token``
    starts; ``tune`` names the tune when the text came from a named set.
    """

    def __init__(self, reason: str, position: int, token: str, tune: str | None = None) -> None:
        where = f"tune {tune!r}: " if tune is not None else ""
        super().__init__(f"{where}at character {position}: {reason}: {token!r}")
        self.reason = reason
        self.position = position
        self.token = token
        self.tune = tune

    def for_tune(self, tune: str) -> RtttlError:
        """The same error, its message naming ``tune``."""
        return RtttlError(self.reason, self.position, self.token, tune)
