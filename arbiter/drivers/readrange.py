"""The simulator's model of where an RC522 reads an NTAG213 sticker (simple, and stated).

Facts it starts from (HARDWARE-NOTES, "Building without soldering"): a 25 mm NTAG213
sticker reads at about 20-40 mm straight above a common RC522 board at the chip's
reset gain (33 dB); the receiver gain (RFCfgReg RxGain) is 18 to 48 dB.

The model, for a sticker lying flat, parallel to the antenna:

- it reads when its distance to the antenna loop's centre is at most the reach
  ``R(g)`` (a sphere: real read zones are narrower sideways, so the model errs towards
  cross-reads, the side a builder must check);
- ``R(33 dB) = 30 mm``, the middle of 20-40 mm;
- the tag's answer (load modulation) falls as the cube of the distance, a small
  loop's near field, so ``g`` dB more gain reaches ``10 ** (g / 60)`` times as far:
  18 dB 17 mm, 23 dB 20 mm, 33 dB 30 mm, 38 dB 36 mm, 43 dB 44 mm;
- never beyond 45 mm (``POWER_LIMIT_MM``): the gain amplifies only what comes back,
  and beyond that the field no longer powers the tag (48 dB reaches 45 mm, not 53);
- heights are the sticker's height above the slot's floor, where a seated piece's
  sticker lies; the floor is ``floor_mm`` (3 mm: slot floor and shoe) above the antenna;
- the other slot's antenna is ``spacing_mm`` to the side (83 mm: ``rc_pitch`` of
  hardware/gg_params.scad, antenna centre to antenna centre).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: The chip's reset gain, at which the reach below is stated.
RESET_GAIN_DB = 33
#: Reach at the reset gain, mm from the antenna's centre.
REACH_AT_RESET_MM = 30.0
#: Beyond this the field does not power an NTAG213, whatever the receiver's gain.
POWER_LIMIT_MM = 45.0


@dataclass(frozen=True)
class ReadRangeModel:
    """Where a sticker reads, for the simulator (see the module doc for the model)."""

    floor_mm: float = 3.0
    spacing_mm: float = 83.0
    reach_at_reset_mm: float = REACH_AT_RESET_MM

    def reach_mm(self, gain_db: int) -> float:
        """How far from the antenna's centre a sticker reads at ``gain_db``."""
        reach = self.reach_at_reset_mm * 10 ** ((gain_db - RESET_GAIN_DB) / 60)
        return min(reach, POWER_LIMIT_MM)

    def reads(self, gain_db: int, height_mm: float, *, other_slot: bool = False) -> bool:
        """Whether a slot's reader reads a sticker ``height_mm`` above a slot floor:
        its own slot's, or (``other_slot``) the other slot's."""
        side = self.spacing_mm if other_slot else 0.0
        return math.hypot(side, self.floor_mm + height_mm) <= self.reach_mm(gain_db)
