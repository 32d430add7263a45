"""Errors of arbiter.drivers.readers: each derives from ArbiterError."""

from __future__ import annotations

from arbiter.errors import ArbiterError


class ReaderError(ArbiterError):
    """A reader could not be set up (bad pin, missing port)."""


class McuLineError(ArbiterError, ValueError):
    """A line from the microcontroller is not a valid protocol line."""


class SimTagError(ArbiterError, ValueError):
    """A tag id the simulated reader kind never sends (wrong length, not hex)."""
