"""The root of the arbiter's errors.

Every error the arbiter raises on purpose derives from :class:`ArbiterError`,
so a caller (the command line, the service) can tell "a problem it reports in
one line" from a bug, with one ``except``. Each narrow error also keeps the
built-in base that describes it (``ValueError`` for bad text, ``LookupError``
for an unknown name), so it can be caught as such too.
"""

from __future__ import annotations


class ArbiterError(Exception):
    """Something the arbiter reports in words: bad input, a missing part, a refusal."""


class ThreadDeclarationError(ArbiterError, ValueError):
    """A kind of thread declared twice under one name, or with no one-line purpose, or a
    thread started of a kind never declared (``arbiter.threads``)."""


class PinFormatError(ArbiterError, ValueError):
    """A PIN that breaks the PIN rule; the message names the setting it came from."""
