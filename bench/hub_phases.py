"""Run ``gg-arbiter hub`` with wall-clock stamps at each step of an event's way to the viewers.

Used by ``bench_hub_venue.py --phases``: ``python bench/hub_phases.py OUT.json HUB-ARGS...``
runs the hub's command line as usual, with the hub's own code wrapped (nothing in the
product changes) so that it notes, for every challenge event:

- ``received``: paho hands the message to the ingest (``Ingest._message``);
- ``committed``: the ledger has it on disk and the feed is told (``VenueFeed.changed``);

and for every feed send: when the flush began, when its rows were read and when its
message was in every stream's queue, with the tables it carried. At exit (SIGTERM) it
writes them to OUT.json for the bench to join with its publish and arrival times.
"""

from __future__ import annotations

import atexit
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arbiter.app import cli  # noqa: E402
from arbiter.hub.ingest import Ingest  # noqa: E402
from arbiter.hubweb.feed import VenueFeed  # noqa: E402

_lock = threading.Lock()
received: list[tuple[str, int, float]] = []  # (table, challenge number, when)
committed: list[tuple[str, int, float]] = []
flushes: list[tuple[float, float, float, list[str]]] = []  # (begun, rows read, queued, tables)
_pending = threading.local()


def _challenge(topic: str, payload: bytes) -> tuple[str, int] | None:
    if not topic.endswith("/events"):
        return None
    try:
        body = json.loads(payload)
    except ValueError:
        return None
    if body.get("type") != "challenge":
        return None
    return str(body["table"]), int(body["number"])


def main() -> int:
    out = Path(sys.argv[1])
    original_message = Ingest._message
    original_changed = VenueFeed.changed
    original_flush = VenueFeed.flush
    original_send = VenueFeed._send

    def message(self: Ingest, client: Any, userdata: Any, msg: Any) -> None:
        mark = _challenge(msg.topic, msg.payload)
        if mark is not None:
            with _lock:
                received.append((*mark, time.time()))
        original_message(self, client, userdata, msg)

    # The ingest calls changed(table, "events") once per new event, right after its
    # commit, in the order of the events; each table's challenges come in order.
    seen: dict[str, int] = {}

    def changed(self: VenueFeed, table: str, kind: str = "") -> None:
        if kind == "events":
            with _lock:
                n = seen.get(table, -1) + 1  # event 1 is the new game: challenge 0
                seen[table] = n
                committed.append((table, n, time.time()))
        original_changed(self, table, kind)

    def flush(self: VenueFeed) -> Any:
        _pending.begun = time.time()
        return original_flush(self)

    def send(self: VenueFeed, message: dict[str, Any]) -> None:
        read = time.time()
        original_send(self, message)
        if message.get("type") == "tables":
            with _lock:
                flushes.append((getattr(_pending, "begun", read), read, time.time(),
                                [row["table"] for row in message["tables"]]))

    Ingest._message = message  # type: ignore[method-assign, assignment]
    VenueFeed.changed = changed  # type: ignore[method-assign]
    VenueFeed.flush = flush  # type: ignore[method-assign]
    VenueFeed._send = send  # type: ignore[method-assign]

    def dump() -> None:
        with _lock:
            out.write_text(json.dumps({"received": received, "committed": committed,
                                       "flushes": flushes}))

    atexit.register(dump)
    return cli.main(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
