"""A raw watch on the slot readers: what they see before debounce, checksums and timeouts.

Readers report only settled states (:class:`~arbiter.drivers.readers.base.SlotReading`).
A builder hunting a stuck switch or a noisy RFID module needs the other side:
every switch pattern as it changes, every tag frame (good or bad), every line
from the slot microcontroller. A reader that can show this has a ``watch_raw``
method taking a callback (or None to stop); :func:`watch_raw` attaches one
callback to every such reader.

Samples carry raw tokens (switch bits, tag ids), never a rank: turning them
into pieces is the job of whoever shows them (``gg-arbiter monitor``), which
must keep the game's secrecy.
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from arbiter.rules.verdict import Role

_log = logging.getLogger(__name__)


class RawKind(enum.Enum):
    """What a raw sample is."""

    SWITCHES = "switches"  # a slot's switch pattern, switch 1 first ("1011000")
    FRAME = "frame"  # an RDM6300 frame: the tag id, or the bad bytes
    LINE = "line"  # a line from the slot microcontroller


@dataclass(frozen=True)
class RawSample:
    """One raw observation.

    :param slot: the slot it is about; None for a microcontroller line about no slot
        (``HELLO``, ``ERR``, a garbled line).
    :param text: the switch bits, the tag id (valid frame), or the raw bytes as text.
    :param ok: a frame or line that passed its checksum; for switches, always True.
    :param note: why a frame or line was refused ("bad checksum", "malformed").
    :param at: the reader's clock when it was seen (seconds, monotonic).
    """

    kind: RawKind
    slot: Role | None
    text: str
    ok: bool = True
    note: str = ""
    at: float = 0.0


RawCallback = Callable[[RawSample], None]


@runtime_checkable
class RawWatchable(Protocol):
    """A reader that can show its raw input."""

    def watch_raw(self, callback: RawCallback | None) -> None:
        """Call ``callback`` (from the reader's threads) with each raw sample; None stops."""
        ...


def watch_raw(readers: Iterable[object], callback: RawCallback | None) -> int:
    """Attach ``callback`` to every reader that has a raw watch; returns how many have one."""
    count = 0
    for reader in readers:
        if isinstance(reader, RawWatchable):
            reader.watch_raw(callback)
            count += 1
    return count


def printable(data: bytes) -> str:
    """Bytes as text a terminal can show: control bytes as ``<02>``."""
    return "".join(chr(b) if 0x20 <= b < 0x7F else f"<{b:02X}>" for b in data)


def emit(callback: RawCallback | None, sample: RawSample) -> None:
    """Give ``sample`` to ``callback`` if there is one; a failing watcher never stops a reader."""
    if callback is None:
        return
    try:
        callback(sample)
    except Exception:
        _log.exception("raw watch callback failed")
