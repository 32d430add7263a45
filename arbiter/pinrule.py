"""The one rule for admin and organiser PINs, for every place a PIN comes from.

A PIN is ASCII digits 0-9 only (``str.isdigit`` alone would take "١٢٣٤٥٦"),
:data:`MIN_DIGITS` to :data:`MAX_DIGITS` of them for a PIN being set: the config
file's ``web.admin_pin``, ``gg-arbiter set-pin``, ``gg-arbiter hub set-pin``.
A PIN only being *sent* to log in (``--pin``, ``GG_ARBITER_PIN``) may be as short
as :data:`LEGACY_MIN_DIGITS`: an ``admin.json`` made before the 6-digit rule still
opens, and the log says to set a longer one (see :func:`is_short`).

Standard library only: the command line checks a PIN without loading the web app.
"""

from __future__ import annotations

from arbiter.errors import PinFormatError

#: A new PIN: at least this many digits (10**6 PINs against the attempt limits).
MIN_DIGITS = 6
MAX_DIGITS = 12
#: PINs set before the 6-digit rule had at least this many: they still log in.
LEGACY_MIN_DIGITS = 4

#: What a person is told about the rule (help texts and errors).
RULE = f"{MIN_DIGITS} to {MAX_DIGITS} digits 0-9"


def check_pin_format(pin: str, setting: str, *, new: bool = True) -> str:
    """Return ``pin`` when it keeps the rule; ``new`` False takes a legacy length too.

    :param setting: where the PIN came from, named in the error (``web.admin_pin``,
        ``GG_ARBITER_PIN``, ``set-pin``).
    :raises PinFormatError: a one-line message naming ``setting``.
    """
    low = MIN_DIGITS if new else LEGACY_MIN_DIGITS
    if not (pin.isascii() and pin.isdigit() and low <= len(pin) <= MAX_DIGITS):
        rule = RULE if new else f"{low} to {MAX_DIGITS} digits 0-9"
        raise PinFormatError(f"{setting}: a PIN must be {rule}")
    return pin


def is_short(pin: str) -> bool:
    """True for a PIN that logs in but is shorter than a new PIN may be (legacy)."""
    return len(pin) < MIN_DIGITS


def legacy_pin_note(refused: str) -> str:
    """What ``set-pin`` adds when it refuses a PIN of the old, shorter length: that a
    PIN set before still logs in (with a warning in the log) until it is changed."""
    if refused.isascii() and refused.isdigit() and LEGACY_MIN_DIGITS <= len(refused) < MIN_DIGITS:
        return (f" (PINs of {LEGACY_MIN_DIGITS} or {MIN_DIGITS - 1} digits are no longer set;"
                " one set before still logs in, with a warning in the log, until changed)")
    return ""
