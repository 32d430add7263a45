"""Run ``gg-arbiter hub`` with wall-clock stamps at each step of an event's way to the viewers.

Used by ``bench_hub_venue.py --phases``: ``python bench/hub_phases.py OUT.json HUB-ARGS...``
runs the hub's command line as usual, with the hub's own code wrapped (nothing in the
product changes) so that it notes, for every challenge event:

- ``received``: paho hands the message to the ingest (``Ingest._message``);
- ``committed``: the ledger has it on disk and the feed is told (``VenueFeed.changed``);

for every group commit of the ingest: when it began and ended and how many messages it
wrote; and for every feed send: when the flush began, when its rows were read and when its
message was in every stream's queue, with the tables it carried. At exit (SIGTERM) it
writes them to OUT.json for the bench to join with its publish and arrival times.
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arbiter import wire  # noqa: E402
from arbiter.app import cli  # noqa: E402
from arbiter.hub.broker_link import Ingest  # noqa: E402
from arbiter.hub.ledger_writer import LedgerWriter  # noqa: E402
from web.hub.feed import VenueFeed  # noqa: E402

_lock = threading.Lock()
received: list[tuple[str, int, float]] = []  # (table, challenge number, when)
committed: list[tuple[str, int, float]] = []
flushes: list[tuple[float, float, float, list[str]]] = []  # (begun, rows read, queued, tables)
pauses: list[tuple[int, float]] = []  # the garbage collector's: (generation, seconds)
batches: list[tuple[float, float, int]] = []  # the ingest's group commits: (begun, done, size)
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


# CPU seconds by kind of thread (the name without its number), noted while they live.
thread_cpu: dict[str, float] = {}


def _note_thread_cpu() -> None:
    ticks = os.sysconf("SC_CLK_TCK")
    names: dict[int, str] = {}
    for t in threading.enumerate():
        if t.native_id is not None:
            names[t.native_id] = t.name.rstrip("0123456789").rstrip("-_ ") or t.name
    used: dict[str, float] = {}
    for tid, name in names.items():
        try:
            stat = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        used[name] = used.get(name, 0.0) + (int(stat[11]) + int(stat[12])) / ticks
    with _lock:
        thread_cpu.update(used)


def main() -> int:
    out = Path(sys.argv[1])
    original_message = Ingest._message
    original_changed = VenueFeed.changed
    original_flush = VenueFeed.flush
    original_send = VenueFeed._send
    original_take_batch = LedgerWriter.take_batch

    def message(self: Ingest, client: Any, userdata: Any, msg: Any) -> None:
        mark = _challenge(msg.topic, msg.payload)
        if mark is not None:
            with _lock:
                received.append((*mark, time.time()))
        original_message(self, client, userdata, msg)

    # The ingest calls changed(table, Topic.EVENTS) once per new event, right after its
    # commit, in the order of the events; each table's challenges come in order.
    seen: dict[str, int] = {}

    def changed(self: VenueFeed, table: str, kind: wire.Topic | None = None) -> None:
        if kind is wire.Topic.EVENTS:
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
                                sorted(message["patch"])))

    def take_batch(self: LedgerWriter, batch: list[Any]) -> None:
        begun = time.time()
        original_take_batch(self, batch)
        with _lock:
            batches.append((begun, time.time(), len(batch)))

    LedgerWriter.take_batch = take_batch  # type: ignore[method-assign]
    Ingest._message = message  # type: ignore[method-assign, assignment]
    VenueFeed.changed = changed  # type: ignore[method-assign]
    VenueFeed.flush = flush  # type: ignore[method-assign]
    VenueFeed._send = send  # type: ignore[method-assign]

    gc_started: list[float] = []

    def note_gc(phase: str, info: dict[str, Any]) -> None:  # the collector stops every thread
        if phase == "start":
            gc_started.append(time.perf_counter())
        elif gc_started:
            pauses.append((info["generation"], time.perf_counter() - gc_started.pop()))

    gc.callbacks.append(note_gc)

    def dump() -> None:
        with _lock:
            out.write_text(json.dumps({"received": received, "committed": committed,
                                       "flushes": flushes, "batches": batches,
                                       "threads": thread_cpu, "gc": pauses}))

    atexit.register(dump)

    def sample() -> None:  # per-thread CPU, read while the threads still run
        while True:
            time.sleep(2)
            _note_thread_cpu()

    threading.Thread(target=sample, name="bench-sampler", daemon=True).start()
    switch = os.environ.get("GG_BENCH_SWITCH_INTERVAL")  # try another GIL switch interval
    if switch:
        sys.setswitchinterval(float(switch))
    period = os.environ.get("GG_BENCH_FEED_PERIOD")  # try another throttle period
    if period:
        init = VenueFeed.__init__

        def with_period(self: VenueFeed, *args: Any, **kwargs: Any) -> None:
            init(self, *args, **{**kwargs, "period": float(period)})

        VenueFeed.__init__ = with_period  # type: ignore[method-assign]
    return cli.main(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
