"""The device's own error: a command it cannot carry out."""

from __future__ import annotations

from arbiter.errors import ArbiterError


class DeviceError(ArbiterError):
    """A device command that cannot be carried out (closed, busy, record unwritable)."""
