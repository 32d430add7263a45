"""Asking tables to publish again the events and records the ledger lacks
(docs/tournament/mqtt.md, ``resend``).

A table's events can be missing in two ways: a gap (event n held, n-1 not) or
a tail (its retained status says it published up to ``event_seq``, the ledger
holds fewer). Either may close by itself within moments: QoS 1 redelivery
after a reconnect can come out of order, and a status can overtake nothing
but still race the ledger's write. So a run is asked for only once it has been
missing for ``grace`` seconds, and only if the table's last request did not
already ask for it (the request is retained: a table offline gets it when it
comes back). The organiser can always ask again (``ask``).

Records too: a table's records share one retained topic (the latest), so a hub that was
not there when an earlier game's record went out (a fresh ledger, a session the broker
dropped) lacks it; :meth:`arbiter.hub.tables.TableState.missing_records` names them,
and they are asked for in the same request, by the same rule.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from arbiter import wire
from arbiter.errors import ArbiterError
from arbiter.hub.ledger import Ledger, ResendAsk
from arbiter.logthrottle import LogThrottle
from arbiter.threads import BackgroundThread, declare

RESENDER = declare("hub-resend", __name__,
                   "asks a table to resend the events missing for longer than the grace")

log = logging.getLogger(__name__)

#: Default seconds a run must stay missing before the table is asked.
GRACE = 10.0
#: Seconds between two passes at most while events pour in (each pass reads the ledger
#: for every table that changed; the grace period is seconds long anyway).
CHECK_EVERY = 1.0
#: Seconds the serving thread sleeps when nothing is pending (it is woken by changes).
IDLE = 5.0

Runs = tuple[tuple[int, int], ...]


def resend_payload(ask: ResendAsk) -> bytes:
    """The retained ``resend`` message of docs/tournament/mqtt.md."""
    return wire.encode(wire.resend_message(ask.table, ask.id, [list(r) for r in ask.ranges],
                                           list(ask.records)))


def _covered(runs: Runs, by: Runs) -> bool:
    return all(any(a <= first and last <= b for a, b in by) for first, last in runs)


class Resender:
    """Watches the ledger's missing runs per table and asks for them after ``grace`` s.

    ``publish(ask)`` sends a request to its table (the hub's MQTT client; it may raise
    an ArbiterError, logged). ``check()`` is one pass, for a fake ``clock`` in tests;
    ``start()`` runs passes in a thread, woken by ``changed(table, kind)``.
    """

    def __init__(
        self,
        ledger: Ledger,
        publish: Callable[[ResendAsk], None],
        *,
        grace: float = GRACE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ledger = ledger
        self.grace = grace
        self._publish = publish
        self._clock = clock
        self._lock = threading.Lock()
        self._dirty: set[str] = set()
        self._all = True  # the first pass looks at every table the ledger knows
        self._seen: dict[str, list[tuple[int, int, float]]] = {}  # missing runs, since when
        self._seen_records: dict[str, dict[str, float]] = {}  # missing records, since when
        self._wake = threading.Event()
        self._thread = BackgroundThread(self._run, RESENDER, wake=self._wake.set)
        self._log = LogThrottle()

    # --- driven by the ingest (any thread) ----------------------------------------

    def changed(self, table: str, kind: wire.Topic) -> None:
        """A message of ``table`` reached the ledger: look at it at the next pass (the
        resender follows :attr:`arbiter.hub.ingest.Ingest.changes`)."""
        if kind in (wire.Topic.EVENTS, wire.Topic.STATUS, wire.Topic.RECORD):
            with self._lock:
                self._dirty.add(table)
            self._wake.set()

    # --- one pass ---------------------------------------------------------------------

    def check(self) -> list[ResendAsk]:
        """Ask each table for its runs and records missing for ``grace`` s and not asked
        yet."""
        now = self._clock()
        with self._lock:
            tables = set(self.ledger.tables.names()) if self._all else set(self._dirty)
            self._dirty.clear()
            self._all = False
        tables |= set(self._seen) | set(self._seen_records)  # waiting for their grace
        asked: list[ResendAsk] = []
        last_asks = self.ledger.events.resends()
        for table in sorted(tables):
            runs = self._track(table, now)
            # As many runs as one request carries (the first ones): the rest are asked for
            # once these have come.
            due = tuple((a, b) for a, b, since in runs
                        if now - since >= self.grace)[:wire.MAX_RANGES]
            records = tuple(g for g, since in self._track_records(table, now).items()
                            if now - since >= self.grace)
            last = last_asks.get(table)
            if not (due or records) or (last is not None and _covered(due, last.ranges)
                                        and set(records) <= set(last.records)):
                continue
            line = self._log.note(table)  # a table's status can claim any count: bounded
            if line is not None:
                log.warning("table %s: %s missing for %.0f s: asking the table to"
                            " resend (%d asked of this table so far, %d lines held back)",
                            table, _what(due, records), self.grace, *line)
            ask = self._send(table, due, records)
            if ask is not None:
                asked.append(ask)
        return asked

    def _track(self, table: str, now: float) -> list[tuple[int, int, float]]:
        """The table's missing runs, each with the time its oldest part went missing."""
        old = self._seen.get(table, [])
        runs = [(a, b, min((t for x, y, t in old if x <= b and a <= y), default=now))
                for a, b in self.ledger.tables.missing(table)]
        if runs:
            self._seen[table] = runs
        else:
            self._seen.pop(table, None)
        return runs

    def _track_records(self, table: str, now: float) -> dict[str, float]:
        """The games whose records the table lacks, each with when it was first seen so."""
        old = self._seen_records.get(table, {})
        games = {g: old.get(g, now) for g in self.ledger.tables.missing_records(table)}
        if games:
            self._seen_records[table] = games
        else:
            self._seen_records.pop(table, None)
        return games

    def ask(self, table: str) -> ResendAsk | None:
        """Ask ``table`` now for every run and record it is missing (the organiser's "ask
        again"); None when nothing is missing. :raises ArbiterError: not sent (from
        ``publish``)."""
        runs = tuple(self.ledger.tables.missing(table))
        records = tuple(self.ledger.tables.missing_records(table))
        if not runs and not records:
            return None
        ask = self.ledger.events.ask_resend(table, runs, records)
        self._publish(ask)
        log.info("table %s: resend of %s asked (request %d)", table, _what(runs, records),
                 ask.id)
        return ask

    def _send(self, table: str, runs: Runs, records: tuple[str, ...] = ()) -> ResendAsk | None:
        ask = self.ledger.events.ask_resend(table, runs, records)
        try:
            self._publish(ask)
        except ArbiterError as exc:  # the broker away: the organiser's page shows the gap
            line = self._log.note("not sent")
            if line is not None:
                log.error("table %s: the resend request could not be sent: %s (%d not sent so"
                          " far, %d lines held back)", table, exc, *line)
            return None
        return ask

    # --- the serving thread --------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._thread.stop(10)

    def _run(self, stopping: threading.Event) -> None:
        while not stopping.is_set():
            try:
                self.check()
            except Exception:  # a pass that failed is retried; the hub serves on
                log.exception("resend check failed")
            # Wake for a change, or when the first run still in its grace is due.
            now = self._clock()
            pending = [since + self.grace - now for runs in self._seen.values()
                       for _a, _b, since in runs if since + self.grace > now]
            pending += [since + self.grace - now for games in self._seen_records.values()
                        for since in games.values() if since + self.grace > now]
            wait = min(pending) if pending else IDLE
            self._wake.wait(min(wait, IDLE))
            self._wake.clear()
            stopping.wait(CHECK_EVERY)


def _text(runs: Runs) -> str:
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def _what(runs: Runs, records: tuple[str, ...]) -> str:
    """``events 1-3, 9`` and/or ``the records of games 4, 5``, for a log line."""
    parts = [f"events {_text(runs)}"] if runs else []
    if records:
        parts.append("the records of games " + ", ".join(records))
    return " and ".join(parts)
