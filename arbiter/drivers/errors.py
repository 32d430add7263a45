"""Errors of arbiter.drivers: each derives from ArbiterError."""

from __future__ import annotations

from arbiter.errors import ArbiterError


class UnknownPieceError(ArbiterError, LookupError):
    """A token that names no piece: an unused codeword or an unenrolled tag."""

    public_reason = "a piece in the slots is not known (unused key code or tag not enrolled)"


class PinSetupError(ArbiterError):
    """A pin cannot be used: no pin library, a pin in use, no PWM on it."""


class SignalsClosedError(ArbiterError, RuntimeError):
    """The outputs were used after :meth:`Signals.close`."""


class UnknownTuneError(ArbiterError, LookupError):
    """A tune was asked for by a name the tune set does not have."""
