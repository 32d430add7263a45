"""The hub's ledger writer: the table messages the broker delivers, into the ledger.

Group commit: paho's thread only queues each message (:attr:`LedgerWriter.inbox`); the
writer thread takes every message queued and writes them in one ledger transaction (one
fsync, :meth:`LedgerStore.batch`), then acknowledges them and tells its followers
(:class:`arbiter.hub.changes.Changes`). So the broker's window of unacknowledged
messages never waits on one fsync per message, and a backlog after a slow disk is
written at once. Acknowledgements are manual: a QoS 1 event is acknowledged only once
the ledger has it on disk (or has refused it for good), so a hub killed mid-message gets
it again. The link to the broker that feeds it is :mod:`arbiter.hub.broker_link`.
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import cast

import paho.mqtt.client as mqtt

from arbiter import wire
from arbiter.hub.changes import Changes
from arbiter.hub.errors import ContradictingEventError, RecordRefusedError
from arbiter.hub.ledger import Ledger
from arbiter.hub.sessions import Delivered
from arbiter.threads import BackgroundThread, declare
from arbiter.wire.errors import WireFormatError

LEDGER_WRITER = declare("hub-ledger-writer", __name__,
                        "writes the table events the broker delivers into the ledger, in order")

log = logging.getLogger(__name__)

#: Most messages written in one transaction (a replayed round arrives all at once).
MAX_BATCH = 500
#: A checked message: (table, its topic, the message), or (table, None, why it is refused),
#: or None for a topic that is not a table's of this event.
_Checked = tuple[str, wire.Topic, object] | tuple[str, None, WireFormatError] | None
#: Topics the broker keeps retained and gives again: a batch of only these needs no fsync.
RETAINED_KINDS = frozenset({wire.Topic.ONLINE, wire.Topic.STATUS})


class Progress:
    """When the ledger writer's batch under way began (None: it waits for messages, which
    a quiet venue may never send, and that is no fault): what the hub's systemd watchdog
    asks, so that a writer stuck on the ledger gets the hub restarted."""

    def __init__(self) -> None:
        self.since: float | None = None

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Around one batch; left set when the batch ends the writer (stuck for good)."""
        self.since = time.monotonic()
        yield
        self.since = None

    def keeps_up(self, within: float) -> bool:
        """Whether no batch has been under way for ``within`` seconds or more."""
        since = self.since
        return since is None or time.monotonic() - since < within



class LedgerWriter:
    """Writes what the broker delivers for ``event`` into ``ledger``, in batches, and
    tells ``changes`` of each message taken, once committed.

    ``main`` is the hub's main MQTT client: a table's own session brings a second copy
    of its events, whose refusals are not noted twice.
    """

    def __init__(self, ledger: Ledger, event: str, changes: Changes, main: mqtt.Client) -> None:
        self.ledger = ledger
        self.event = event
        self.changes = changes
        self._main = main
        #: What paho's threads deliver; a None ends the writer once what is before it is
        #: written.
        self.inbox: queue.Queue[Delivered | None] = queue.Queue()
        self.progress = Progress()  # which the hub's systemd watchdog asks
        self._thread: BackgroundThread | None = None

    def start(self) -> None:
        """Start the writer thread."""
        self._thread = BackgroundThread(
            lambda _stopping: self.run(), LEDGER_WRITER,
            wake=lambda: self.inbox.put(None),  # after what is queued: it is written first
        )
        self._thread.start()

    def stop(self, timeout: float) -> None:
        """Write what is queued, then end the writer thread (if started)."""
        if self._thread is not None:
            self._thread.stop(timeout)
            self._thread = None


    def run(self) -> None:
        """The writer thread's loop: each time, every message queued, in one transaction;
        until a None is queued (after what is queued before it: that is written first)."""
        while True:
            first = self.inbox.get()
            if first is None:
                return
            batch = [first]
            last = False
            while len(batch) < MAX_BATCH:
                try:
                    msg = self.inbox.get_nowait()
                except queue.Empty:
                    break
                if msg is None:
                    last = True
                    break
                batch.append(msg)
            with self.progress.batch():
                try:
                    self.take_batch(batch)
                except Exception:  # the ingest must not stop on one batch; what it did not
                    log.exception("the ingest's writer failed on a batch")  # ack comes again
            if last:
                return

    def take_batch(self, batch: list[Delivered]) -> None:
        """Write ``batch`` in one transaction; then acknowledge (each message on the client
        that delivered it) and announce what it took.

        Every message is checked against the wire format first, outside the ledger's
        lock: one that is not the format is refused alone (noted in the rejections,
        acknowledged), never rolling back its neighbours. A message the ledger then
        fails on is undone alone: for a fault of the disk (sqlite3.OperationalError)
        it is not acknowledged, so the broker sends it again at the next connection;
        for any other error (it can only be this message's) it is refused and
        acknowledged, so no message can wedge the broker's window. If the commit
        fails, none is acknowledged.
        """
        durable = any(_kind(self.event, m.topic) not in RETAINED_KINDS for _c, m in batch)
        checked = [(client, msg, _check(self.event, msg.topic, msg.payload))
                   for client, msg in batch]
        done: list[Delivered] = []
        changes: list[tuple[str, wire.Topic]] = []
        try:
            with self.ledger.store.batch(durable=durable):
                for client, msg, taken in checked:
                    # A table's own session brings a second copy of its events (the main
                    # one has them too): a refusal is noted once, from the main session.
                    copy = (client is not self._main
                            and _kind(self.event, msg.topic) is wire.Topic.EVENTS)
                    if self._write_one(msg.topic, taken, changes, copy):
                        done.append((client, msg))
        except sqlite3.Error:
            log.exception("the ledger could not commit %d message(s)", len(batch))
            return
        for client, msg in done:  # in the order received, as MQTT wants
            if msg.qos > 0:
                client.ack(msg.mid, msg.qos)
        for table, kind in changes:
            self.changes.changed(table, kind)

    def _write_one(
        self, topic: str, taken: _Checked, changes: list[tuple[str, wire.Topic]],
        copy: bool = False,
    ) -> bool:
        """Hand one checked message to the ledger; True when it is done with (kept or
        refused): to be acknowledged. A ``copy`` is refused without a note."""
        if taken is None:
            return True
        table, kind, message = taken
        try:
            if kind is None:
                assert isinstance(message, WireFormatError)
                if not copy:
                    self.ledger.events.note_rejection(
                        table, message.seq, f"{_what(self.event, topic)}: {message}")
            elif kind is wire.Topic.EVENTS:
                if self.ledger.events.record(table, cast(wire.Event, message), note=not copy):
                    changes.append((table, kind))
            else:
                self._take(table, kind, message, topic, changes)
            return True
        except sqlite3.Error as exc:
            if _transient(exc):  # the disk: not acknowledged, sent again
                log.exception("the ledger could not take a message on %s", topic)
                return False
            return self._refuse(table, topic, exc)
        except (ContradictingEventError, RecordRefusedError, WireFormatError):
            return True  # refused for good; the ledger noted it
        except Exception as exc:  # this message only (its savepoint is undone)
            return self._refuse(table, topic, exc)

    def _refuse(self, table: str, topic: str, exc: Exception) -> bool:
        """Refuse a message the ledger failed on for a reason of its own (an integer out of
        SQLite's range, a constraint): noted and acknowledged, so it cannot come back.
        Logged as every refusal is, within the one log rule (note_rejection)."""
        try:
            self.ledger.events.note_rejection(
                table, None, f"{_what(self.event, topic)}: the ledger failed"
                             f" ({type(exc).__name__})")
        except sqlite3.Error:
            return False
        return True

    def _take(
        self, table: str, kind: wire.Topic, message: object, topic: str,
        changes: list[tuple[str, wire.Topic]],
    ) -> None:
        """One well-formed message into the ledger; what it changed is added to
        ``changes``, to announce once committed."""
        if kind is wire.Topic.ASSIGNMENT:
            return  # the hub's own
        if message is None:
            return  # a cleared retained topic
        if kind is wire.Topic.RESEND:
            return  # the hub's own too (its ids are random: none to learn from the broker)
        if kind is wire.Topic.ONLINE:
            self.ledger.tables.set_online(table, bool(message))
            changes.append((table, kind))
        elif kind is wire.Topic.STATUS:
            self.ledger.tables.set_status(table, cast(wire.StatusMessage, message))
            changes.append((table, kind))
        elif kind is wire.Topic.RECORD:
            record = cast(wire.RecordMessage, message)
            self.ledger.tables.set_record(table, str(record["game"]), record["record"])
            changes.append((table, kind))



def _transient(exc: sqlite3.Error) -> bool:
    """A fault of the disk or the database (the message may be taken when sent again), not
    of the message (a constraint, a value SQLite cannot hold)."""
    return isinstance(exc, sqlite3.OperationalError) or type(exc) is sqlite3.DatabaseError


def _check(event: str, topic: str, payload: bytes) -> _Checked:
    """What to do with one message: (table, topic, message) or (table, None, refusal),
    or None for a topic that is not a table's of this event (acknowledged, ignored)."""
    name = wire.split(event, topic)
    if name is None:
        return None
    if name.topic is None:
        return name.table, None, WireFormatError(f"unknown topic {name.rest[:40]!r}")
    try:
        return name.table, name.topic, wire.parse(name.topic, payload, table=name.table,
                                                  game=name.game)
    except WireFormatError as exc:
        return name.table, None, exc


def _kind(event: str, topic: str) -> wire.Topic | None:
    name = wire.split(event, topic)
    return None if name is None else name.topic


def _what(event: str, topic: str) -> str:
    """The part of a table's topic after its prefix, for a refusal's note."""
    name = wire.split(event, topic)
    return "" if name is None else name.rest

