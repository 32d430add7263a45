"""The default tunes, as RTTTL text: the single source the config file's defaults come from.

Every tune fits a passive piezo driven by gpiozero's ``TonalBuzzer`` over
C3..C7. The battle phrase is the same for every challenge, so it can never
hint at the ranks; Taps is public, it plays only when a Flag falls.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from arbiter.tunes.errors import RtttlError
from arbiter.tunes.rtttl import Tune, parse

__all__ = ["DEFAULT_TUNES", "REQUIRED_TUNES", "load_tunes"]

#: The tunes the device plays; a config must provide each (defaults fill the gaps).
REQUIRED_TUNES: tuple[str, ...] = ("battle", "taps", "error", "ready", "fault", "confirm")

DEFAULT_TUNES: Mapping[str, str] = MappingProxyType(
    {
        # Bugle "Charge": G4 C5 E5 G5. E5 G5, 2.06 s.
        "battle": "Charge:d=8,o=5,b=160:g4,c,e,4g.,e,2g",
        # As given in HARDWARE-NOTES.md: 24 notes, 22.9 s.
        "taps": (
            "Taps:d=4,o=5,b=63:8g4.,16g4,2c,8g4.,16c,2e,8g4,8c,e,8g4,8c,e,"
            "8g4,8c,2e,8c.,16e,2g,8e.,16c,2g4,8g4.,16g4,1c"
        ),
        # Two low buzzes: refused, take the pieces out. 0.47 s.
        "error": "Error:d=8,o=4,b=160:c,16p,c",
        # Rising: ready for a challenge. 0.38 s.
        "ready": "Ready:d=16,o=5,b=160:c,e,8g",
        # Falling to a low C: the device itself is not working. 0.83 s.
        "fault": "Fault:d=8,o=5,b=180:g,e,c,4c4",
        # Three short high beeps: NEW GAME asks to be confirmed (hold it again). 0.47 s.
        "confirm": "Confirm:d=16,o=6,b=160:c,p,c,p,c",
    }
)


def load_tunes(mapping: Mapping[str, str]) -> dict[str, Tune]:
    """Parse every RTTTL text of ``mapping``, keeping its names.

    :raises RtttlError: for the first tune that does not parse; the message names it.
    """
    tunes: dict[str, Tune] = {}
    for name, text in mapping.items():
        try:
            tunes[name] = parse(text)
        except RtttlError as error:
            raise error.for_tune(name) from error
    return tunes
