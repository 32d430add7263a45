"""The read-range check of the RC522 flagship: where a sticker reads, and a gain to use.

The builder holds one piece's sticker over each slot in turn, at falling heights
above the slot's floor (:data:`HEIGHTS_MM`) until its slot reads it, then seated
(:func:`run_steps`); at each height both slots are read.
From that: the height at which the sticker first reads in its own slot, whether the
other slot ever reads it (a cross-read: the arbiter would refuse that challenge as
a misread), and a receiver gain to recommend:

- a cross-read, or a sticker read even at the top height (a piece passing over a
  slot would count): one step lower;
- a slot that never reads, or reads only within :data:`CLOSE_MM` of its floor
  (touching): one step higher;
- else keep it.

The check passes when neither slot cross-reads and each reads the sticker seated.
Pure logic: :mod:`arbiter.app.range_console` drives it (a person, or the simulator).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from arbiter.drivers.readers.mcu import RX_GAINS_DB
from arbiter.rules.verdict import Role

#: Heights above the slot floor (mm) the sticker is held at, top first.
HEIGHTS_MM = (50, 40, 30, 20, 15, 10, 5, 0)
#: Reading only this close to the floor, or closer, is reading only when touching.
CLOSE_MM = 5


@dataclass(frozen=True)
class RangeStep:
    """One height: the sticker held ``height_mm`` above slot ``over``'s floor, and the
    slots that read a tag meanwhile."""

    over: Role
    height_mm: int
    read_by: frozenset[Role]


@dataclass(frozen=True)
class SlotRange:
    """What one slot's sticker did: the greatest height its own slot read it at (None:
    never), and the greatest the other slot read it at (None: never)."""

    slot: Role
    first_read_mm: int | None
    cross_read_mm: int | None


@dataclass(frozen=True)
class RangeReport:
    """The result: per slot, the gain used, the gain to use, and whether it passed."""

    slots: tuple[SlotRange, ...]
    gain_db: int
    recommended_db: int
    passed: bool
    advice: str

    def lines(self) -> list[str]:
        """The summary for the builder, ending in PASS or FAIL."""
        out = []
        for s in self.slots:
            other = _other(s.slot).name
            first = (f"first reads {s.first_read_mm} mm above its floor"
                     if s.first_read_mm is not None else "never reads its sticker")
            cross = (f"the {other} slot reads it too, from {s.cross_read_mm} mm: CROSS-READ"
                     if s.cross_read_mm is not None else f"the {other} slot never reads it")
            out.append(f"{s.slot.name}: {first}; {cross}")
        out.append(self.advice)
        out.append("PASS" if self.passed else "FAIL")
        return out


def _other(role: Role) -> Role:
    return Role.DEFENDER if role is Role.ATTACKER else Role.ATTACKER


def _highest(steps: Iterable[RangeStep], over: Role, reader: Role) -> int | None:
    heights = [s.height_mm for s in steps if s.over is over and reader in s.read_by]
    return max(heights) if heights else None


def judge(steps: Iterable[RangeStep], gain_db: int) -> RangeReport:
    """Sum up the steps of both slots at ``gain_db`` (see the module doc)."""
    steps = list(steps)
    slots = tuple(SlotRange(role, _highest(steps, role, role), _highest(steps, role, _other(role)))
                  for role in Role)
    index = RX_GAINS_DB.index(gain_db)
    lower = RX_GAINS_DB[index - 1] if index > 0 else None
    higher = RX_GAINS_DB[index + 1] if index + 1 < len(RX_GAINS_DB) else None
    crossed = any(s.cross_read_mm is not None for s in slots)
    seated = all(0 in [st.height_mm for st in steps if st.over is s.slot and s.slot in st.read_by]
                 for s in slots)
    too_far = any(s.first_read_mm == HEIGHTS_MM[0] for s in slots)
    too_close = any(s.first_read_mm is None or s.first_read_mm <= CLOSE_MM for s in slots)
    key = ("reader.rx_gain_db = {} in the config (try it first: "
           "gg-arbiter selftest --range --gain {})")
    if crossed or too_far:
        why = ("a slot reads the other's sticker" if crossed
               else "a sticker reads far above its slot")
        if lower is None:
            advice = (f"gain: already the lowest ({gain_db} dB) and {why}: move the boards "
                      "further apart or put a grounded foil between them")
        else:
            advice = f"gain: lower it to {lower} dB ({why}): " + key.format(lower, lower)
        recommended = lower if lower is not None else gain_db
    elif too_close:
        why = ("a slot never reads its sticker" if any(s.first_read_mm is None for s in slots)
               else "a sticker reads only when touching")
        if higher is None:
            advice = (f"gain: already the highest ({gain_db} dB) and {why}: check the board's "
                      "wiring and that the sticker lies flat over the antenna")
        else:
            advice = f"gain: raise it to {higher} dB ({why}): " + key.format(higher, higher)
        recommended = higher if higher is not None else gain_db
    else:
        advice = f"gain: keep {gain_db} dB (reader.rx_gain_db = {gain_db})"
        recommended = gain_db
    return RangeReport(slots, gain_db, recommended, passed=seated and not crossed, advice=advice)


def run_steps(sample: Callable[[Role, int], frozenset[Role]]) -> list[RangeStep]:
    """Each slot in turn, heights top first: ``sample(over, height)`` says which slots
    read a tag with the sticker there.

    Once a slot first reads its sticker, the heights between are skipped and the sticker
    is seated (0 mm): all the verdict needs is where it first reads and the seated
    sticker, which is also nearest the other slot's antenna (the worst cross-read). A
    healthy build's builder holds it at 4 or 5 heights a slot instead of 8.
    """
    steps = []
    for over in (Role.ATTACKER, Role.DEFENDER):
        for height in HEIGHTS_MM:
            step = RangeStep(over, height, sample(over, height))
            steps.append(step)
            if over in step.read_by:
                if height != 0:
                    steps.append(RangeStep(over, 0, sample(over, 0)))
                break
    return steps
