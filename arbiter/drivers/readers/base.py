"""The slot-reader interface every backend implements.

A reader watches one or more slots and reports each *stable* change as a
:class:`SlotReading`: debouncing, checksums and timeouts are the reader's job,
so the device only ever sees settled states. A reading carries a *token* (a
key's codeword such as ``"1011000"`` or an RFID tag id such as
``"62E3086CED"``), never a rank: turning tokens into pieces is the job of a
:class:`~arbiter.drivers.identify.PieceIdentifier`.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from arbiter.rules.verdict import Role


class SlotState(enum.Enum):
    """What a slot holds, as far as its reader can tell."""

    EMPTY = "empty"
    PRESENT = "present"  # a valid, stable token
    INVALID = "invalid"  # something is there but cannot be read (half-seated key, bad code)
    FAULT = "fault"  # the reader itself is not working (unplugged, I2C error)


@dataclass(frozen=True)
class SlotReading:
    """One settled state of one slot. ``detail`` is for people and never names a rank."""

    slot: Role
    state: SlotState
    token: str | None = None
    detail: str = ""


ReadingCallback = Callable[[SlotReading], None]
#: A monotonic clock in seconds: ``time.monotonic``, or a fake one in tests.
Clock = Callable[[], float]


class SlotReader(Protocol):
    """A backend reporting readings for the slots it watches.

    ``start`` begins watching and reports each slot's current state at once,
    then every settled change, from any thread. ``close`` stops it and frees
    pins and ports; it is safe to call twice.
    """

    @property
    def slots(self) -> tuple[Role, ...]: ...

    def start(self, report: ReadingCallback) -> None: ...

    def close(self) -> None: ...
