"""Errors of web.kit: each derives from ArbiterError."""

from __future__ import annotations

from arbiter.errors import ArbiterError


class AuthError(ArbiterError):
    """Base of the admin-access errors."""


class AdminFileError(AuthError):
    """admin.json cannot be read or written."""


class StreamsFullError(ArbiterError):
    """As many event streams are open as the hub admits; poll ``/api/status`` instead."""


class StreamBacklogError(ArbiterError):
    """A stream's client left more bytes unread than allowed: it is closed (and reconnects)."""


class StreamGoneError(ArbiterError):
    """A stream's client has gone: nothing more is written to it."""


class WebServerError(ArbiterError):
    """The server could not be started (address in use, bad host)."""
