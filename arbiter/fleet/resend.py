"""The hub's request that a table publish some of its events again (docs/tournament/mqtt.md).

The hub writes it retained on ``gg/<event>/table/<table>/resend``, so a table
that is offline gets it when it comes back. Each request has a random ``id``
(no other ledger, a fresh one of the same event included, makes the same); the
table keeps the ids it served last in ``DATA/resend-served.json``, so the retained
request given again at every reconnection or restart is not served again (serving
it again would be harmless: the hub keeps each sequence number once), and logs
each request it ignores for that.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from arbiter import wire
from arbiter.fleet.errors import ResendError
from arbiter.storage.durable import write_durably
from arbiter.wire.errors import WireFormatError

log = logging.getLogger(__name__)

SERVED_FILE = "resend-served.json"
#: Ids of requests served that the table keeps (the latest): a hub asks again under a new
#: id, so only the retained copy of a recent one comes back.
SERVED_KEPT = 64
#: Most ranges a request may name (a request is one MQTT message, read by a Pi).
MAX_RANGES = wire.MAX_RANGES


@dataclass(frozen=True)
class ResendRequest:
    """Request ``id`` for ``table``: publish again the events numbered in ``ranges``
    (each ``(first, last)``, both included) and the records of the games in ``records``."""

    table: str
    id: int
    ranges: tuple[tuple[int, int], ...]
    records: frozenset[str] = frozenset()

    @classmethod
    def from_payload(cls, payload: bytes) -> ResendRequest | None:
        """The request in an MQTT payload; None for an empty payload (a cleared topic).

        :raises ResendError: not the resend JSON of docs/tournament/mqtt.md.
        """
        try:
            message = wire.parse(wire.Topic.RESEND, payload)
        except WireFormatError as exc:
            raise ResendError(str(exc)) from None
        if message is None:
            return None
        return cls(message["table"], message["id"],
                   tuple(sorted((a, b) for a, b in message["ranges"])),
                   frozenset(str(g) for g in message.get("records", [])))

    def wants(self, seq: int) -> bool:
        return any(first <= seq <= last for first, last in self.ranges)

    def wants_record(self, game: int) -> bool:
        return str(game) in self.records

    @property
    def last(self) -> int:
        """The highest sequence number asked for (0: records only)."""
        return max((last for _first, last in self.ranges), default=0)

    def count(self) -> int:
        """How many sequence numbers and records are asked for (overlapping ranges
        counted once)."""
        total = done = 0
        for first, last in self.ranges:
            total += max(0, last - max(first, done + 1) + 1)
            done = max(done, last)
        return total + len(self.records)


class ServedFile:
    """``DATA/resend-served.json``: the ids of the last requests the table served."""

    def __init__(self, data_dir: Path) -> None:
        self.path = Path(data_dir) / SERVED_FILE

    def load(self) -> tuple[int, ...]:
        """The ids served, oldest first (none: no file, or a damaged one: serving again is
        harmless). A file of a table before random ids (``{"id": n}``) gives its one id."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            ids = data["ids"] if "ids" in data else [data["id"]]
            return tuple(int(i) for i in ids)[-SERVED_KEPT:]
        except FileNotFoundError:
            return ()
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("ignoring %s: %s", self.path, exc)
            return ()

    def save(self, ids: tuple[int, ...]) -> None:
        """Keep the latest :data:`SERVED_KEPT` of ``ids``. :raises OSError: not written."""
        write_durably(self.path, json.dumps(
            {"format": wire.FORMAT, "ids": list(ids[-SERVED_KEPT:])}).encode())
