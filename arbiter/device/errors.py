"""The device's own error: a command it cannot carry out."""

from __future__ import annotations

from arbiter.errors import ArbiterError


class DeviceError(ArbiterError):
    """A device command that cannot be carried out (closed, busy, record unwritable)."""


class SelfTestInGameError(DeviceError):
    """Refused because a game has begun (the self-test would flash and play at the table)."""


class SelfTestTuneError(DeviceError, LookupError):
    """A tune name the config does not have."""
