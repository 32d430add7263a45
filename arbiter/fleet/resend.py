"""The hub's request that a table publish some of its events again (docs/tournament/mqtt.md).

The hub writes it retained on ``gg/<event>/table/<table>/resend``, so a table
that is offline gets it when it comes back. Each request of a table has a
larger ``id`` than the one before; the table keeps the last id it served in
``DATA/resend-served.json``, so a restart does not serve it again (serving it
again would be harmless: the hub keeps each sequence number once).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from arbiter import wire
from arbiter.errors import ArbiterError
from arbiter.storage.durable import write_durably

log = logging.getLogger(__name__)

SERVED_FILE = "resend-served.json"
#: Most ranges a request may name (a request is one MQTT message, read by a Pi).
MAX_RANGES = wire.MAX_RANGES


class ResendError(ArbiterError, ValueError):
    """A resend payload that cannot be used: the table ignores it (logged)."""


@dataclass(frozen=True)
class ResendRequest:
    """Request ``id`` for ``table``: publish again the events numbered in ``ranges``
    (each ``(first, last)``, both included)."""

    table: str
    id: int
    ranges: tuple[tuple[int, int], ...]

    @classmethod
    def from_payload(cls, payload: bytes) -> ResendRequest | None:
        """The request in an MQTT payload; None for an empty payload (a cleared topic).

        :raises ResendError: not the resend JSON of docs/tournament/mqtt.md.
        """
        try:
            message = wire.parse(wire.Topic.RESEND, payload)
        except wire.WireFormatError as exc:
            raise ResendError(str(exc)) from None
        if message is None:
            return None
        return cls(message["table"], message["id"],
                   tuple(sorted((a, b) for a, b in message["ranges"])))

    def wants(self, seq: int) -> bool:
        return any(first <= seq <= last for first, last in self.ranges)

    @property
    def last(self) -> int:
        """The highest sequence number asked for."""
        return max(last for _first, last in self.ranges)

    def count(self) -> int:
        """How many sequence numbers are asked for (overlapping ranges counted once)."""
        total = done = 0
        for first, last in self.ranges:
            total += max(0, last - max(first, done + 1) + 1)
            done = max(done, last)
        return total


class ServedFile:
    """``DATA/resend-served.json``: the id of the last request the table served."""

    def __init__(self, data_dir: Path) -> None:
        self.path = Path(data_dir) / SERVED_FILE

    def load(self) -> int:
        """The last id served (0: none, or a damaged file: serving again is harmless)."""
        try:
            return int(json.loads(self.path.read_text(encoding="utf-8"))["id"])
        except FileNotFoundError:
            return 0
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("ignoring %s: %s", self.path, exc)
            return 0

    def save(self, request_id: int) -> None:
        """:raises OSError: not written."""
        write_durably(self.path, json.dumps({"format": wire.FORMAT, "id": request_id}).encode())
