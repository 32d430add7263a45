"""Errors of arbiter.mqtt: each derives from ArbiterError."""

from __future__ import annotations

from arbiter.errors import ArbiterError


class BrokerAddressError(ArbiterError, ValueError):
    """Not a broker URL; the message says what is wrong."""


class BrokerTlsError(ArbiterError):
    """TLS to the broker cannot work as configured; the message says why, in one line."""
