"""The hub's MQTT side: table topics into the ledger, assignments out to the tables.

Subscribes to every table topic of the event but the records (:data:`MAIN_KINDS`)
at QoS 1 with a persistent session (MQTT 3.1.1 ``clean_session=False`` and a
fixed client id), so messages published while the hub is down are queued by
the broker and delivered when it comes back; and keeps a session of its own
for each table's events and records (:mod:`arbiter.hub.sessions`), so one
table's flood cannot push another's out of a shared queue. A broker that is
down or slow at the start does not stop the hub: it serves, says its link is
down, and tries again with a capped, jittered backoff; only a broker that
answers and refuses the hub's login does.

paho's thread only queues each message it receives, unacknowledged, for the ledger
writer (:mod:`arbiter.hub.ledger_writer`), which commits them in batches and then
acknowledges them. Retained ``online``, ``status`` and ``record`` topics (each table's
latest record) arrive again at every subscription (the records at the table's own
session's), which is how a restarted hub catches up with the tables' state; an earlier
record it lacks it asks the table for (:mod:`arbiter.hub.resend`).

The hub publishes only the retained ``assignment`` and ``resend`` of each
table, never under a table's own topics (:mod:`arbiter.hub.outgoing`).
A payload that names another table than its topic is refused and logged.
"""

from __future__ import annotations

import logging
import ssl
import threading
import time
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.reasoncodes import ReasonCode

from arbiter import wire
from arbiter.hub.changes import Changes
from arbiter.hub.errors import IngestError
from arbiter.hub.ledger import Ledger, ResendAsk
from arbiter.hub.ledger_writer import LedgerWriter
from arbiter.hub.outgoing import (
    PUBLISH_TIMEOUT,
    assignment_bytes,
    publish_retained,
)
from arbiter.hub.resend import resend_payload
from arbiter.hub.sessions import KEEPALIVE, Backoff, TableSessions
from arbiter.logthrottle import LogThrottle
from arbiter.mqtt.tls import check_listener, listener_problem, secure
from arbiter.threads import BackgroundThread, declare

REPUBLISH = declare("hub-republish", __name__,
                    "watches a round's republished assignments until the broker has them all")

log = logging.getLogger(__name__)

#: What the main session subscribes to. Not the records: they come by each table's own
#: session (:mod:`arbiter.hub.sessions`), for the broker queues what it gives at a
#: subscription too, within the same per-client bounds, and a venue's records (one a
#: game) given at once would overflow the main session's; its retained ``online``,
#: ``status``, ``assignment`` and ``resend`` are four a table.
MAIN_KINDS = tuple(kind for kind in wire.Topic if kind is not wire.Topic.RECORD)


class Ingest:
    """Feeds ``ledger`` from the broker at ``host``:``port`` for ``event``.

    :attr:`writer` (:class:`arbiter.hub.ledger_writer.LedgerWriter`) writes what the
    broker delivers into the ledger. :attr:`changes`
    (:class:`arbiter.hub.changes.Changes`) tells its followers of each message the
    ledger took (its :class:`arbiter.wire.Topic`), once committed, from the writer's
    thread, so pages can be told to refresh; and, from paho's
    thread, when the hub's own link to the broker goes up (subscribed) or down, so
    pages can say so.
    """

    def __init__(
        self,
        ledger: Ledger,
        event: str,
        host: str,
        port: int,
        *,
        client_id: str | None = None,
        username: str | None = None,
        password: str | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.ledger = ledger
        self.event = event
        self.host = host
        self.port = port
        self.changes = Changes()
        self._lost = False  # the link went down after it was up: say when it is back
        self.connected = threading.Event()
        client_id = client_id or f"gg-hub-{event}"
        self.client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=client_id,
            clean_session=False,
            protocol=mqtt.MQTTv311,
            manual_ack=True,
        )
        if username:  # the hub's account of a locked-down venue broker (broker-config)
            self.client.username_pw_set(username, password)
        self._tls = tls
        self._tls_reported: str | None = None
        secure(self.client, tls)  # mqtts://: verified TLS, never plain
        # A venue's broker restart should cost seconds, not paho's default 2 minutes; and
        # a broker back after a fault is not met by every client at the same instant.
        self._backoff = Backoff(self.client)
        self.client.on_connect = self._connected
        self.client.on_disconnect = self._disconnected
        self.client.on_connect_fail = self._connect_failed
        self.client.on_subscribe = self._subscribed
        self.client.on_message = self._message
        self.writer = LedgerWriter(ledger, event, self.changes, self.client)
        self._refusal = ""  # the broker's reason when it refused the hub's login
        self._answered = threading.Event()  # the first attempt's outcome, whichever
        self._link_lock = threading.Lock()  # the link's state and its announcements
        self._stopping = threading.Event()
        self._log = LogThrottle()  # the broker's refusals, logged in a bounded way
        self.sessions = TableSessions(event, host, port, self.writer.inbox.put, login=username,
                                      password=password, base_id=client_id, tls=tls,
                                      refused=self._records_here)
        self._records_by_main: set[str] = set()  # tables with no session of their own

    # --- life -------------------------------------------------------------------

    def start(self, timeout: float = 3.0) -> None:
        """Connect, subscribe and serve in paho's thread, trying again with a backoff for
        as long as it takes; waits at most ``timeout`` for the first attempt's outcome.

        :raises IngestError: the broker answered and refused the hub's login (a wrong
            password does not mend itself: said at once, in one line).
        :raises BrokerTlsError: (at once) TLS is why it cannot connect.
        A broker that is down or does not answer is no error: the link is down (the
        pages say so, and since when) until the broker is there.
        """
        check_listener(self.host, self.port, self._tls)
        self.writer.start()
        self.client.connect_async(self.host, self.port, keepalive=KEEPALIVE)
        self.client.loop_start()
        self._answered.wait(timeout)
        if self._refusal:  # it answered: the cause is the login, not the network
            self.stop()
            raise IngestError(f"the broker at {self.host}:{self.port} refused the hub: "
                              f"{self._refusal} (check the user of --broker and "
                              "--password-file)")
        with self._link_lock:
            if not self.connected.is_set():
                self._lost = True
                log.warning("no connection to the broker at %s:%d yet: serving, and trying "
                            "again until it answers", self.host, self.port)
                self.changes.link_changed(False)
        for table in self.ledger.tables.names():  # the tables' own sessions, as before
            self.sessions.open(table)

    def stop(self) -> None:
        """Disconnect cleanly (the broker keeps the session and queues for it), then
        write what is queued (unacknowledged: the broker sends it again anyway)."""
        self._stopping.set()
        self.sessions.close()
        self.client.disconnect()
        self.client.loop_stop()
        self.writer.stop(30)

    def _connected(
        self, client: mqtt.Client, _userdata: Any, _flags: Any, reason: ReasonCode, _props: Any
    ) -> None:
        if reason.is_failure:
            self._refusal = str(reason)
            self._answered.set()
            line = self._log.note("refused")
            if line is not None:
                log.error("broker refused the hub: %s (%d times so far, %d lines held back)",
                          reason, *line)
            return
        self._refusal = ""
        self._backoff.succeeded()
        client.unsubscribe(wire.table_filter(self.event))  # a session from before: all of it
        with self._link_lock:
            by_main = sorted(self._records_by_main)
        client.subscribe([(wire.table_filter(self.event, kind), 1) for kind in MAIN_KINDS]
                         + [(wire.table_pattern(self.event, t, wire.Topic.RECORD), 1)
                            for t in by_main])

    def _records_here(self, table: str) -> None:
        """``table`` has no session of its own (refused, or past the most): its records
        come by the main session."""
        with self._link_lock:
            if table in self._records_by_main:
                return
            self._records_by_main.add(table)
        self.client.subscribe(wire.table_pattern(self.event, table, wire.Topic.RECORD), qos=1)

    def _connect_failed(self, _client: mqtt.Client, _userdata: Any) -> None:
        self._answered.set()
        self._backoff.failed()
        # paho retries without a word; say once why, if TLS is why (a replaced certificate).
        problem = listener_problem(self.host, self.port, self._tls)
        if problem is not None and problem != self._tls_reported:
            log.error("hub: %s", problem)
        self._tls_reported = problem

    def _subscribed(
        self, _client: mqtt.Client, _userdata: Any, _mid: int, reasons: list[ReasonCode],
        _props: Any,
    ) -> None:
        if any(r.is_failure for r in reasons):
            log.error("broker refused the hub's subscription: %s", reasons)
            return
        with self._link_lock:
            self.connected.set()  # connected and subscribed: nothing sent from now is missed
            self._answered.set()
            if self._lost:
                self._lost = False
                if (line := self._log.note("link")) is not None:  # a flapping link: bounded
                    log.warning("reconnected to the broker at %s:%d (%d changes of the link"
                                " so far, %d lines held back)", self.host, self.port, *line)
            self.changes.link_changed(True)

    def _disconnected(
        self, _client: mqtt.Client, _userdata: Any, _flags: Any, reason: ReasonCode, _props: Any
    ) -> None:
        self._answered.set()
        if reason.is_failure:
            self._backoff.failed()
        with self._link_lock:
            was_up = self.connected.is_set()
            self.connected.clear()
            if reason.is_failure and was_up:
                if (line := self._log.note("link")) is not None:
                    log.warning("lost the broker (%s); reconnecting (%d changes of the link so"
                                " far, %d lines held back)", reason, *line)
                self._lost = True
                self.changes.link_changed(False)

    # --- in ---------------------------------------------------------------------

    def _message(self, client: mqtt.Client, _userdata: Any, msg: mqtt.MQTTMessage) -> None:
        self.writer.inbox.put((client, msg))  # paho's thread never waits on the disk
        name = wire.split(self.event, msg.topic)
        if name is not None and name.topic is not None:  # a table of the format: its own
            self.sessions.open(name.table)  # session from now on (once; bounded in number)
    # --- out --------------------------------------------------------------------

    def publish_assignment(
        self, table: str, assignment: wire.AssignmentMessage | None
    ) -> None:
        """Set (or with None clear) a table's retained ``assignment``; waits for the broker."""
        publish_retained(self.client, wire.topic(self.event, table, wire.Topic.ASSIGNMENT),
                          assignment_bytes(assignment), f"assignment for {table!r}")

    def publish_resend(self, ask: ResendAsk) -> None:
        """Publish a table's retained ``resend`` request; waits for the broker."""
        publish_retained(self.client, wire.topic(self.event, ask.table, wire.Topic.RESEND),
                          resend_payload(ask), f"resend request for {ask.table!r}")

    def publish_round(self, round_number: int) -> None:
        """Publish every assignment of a round to its table."""
        for table, payload in self.ledger.admin.assignments(round_number).items():
            self.publish_assignment(table, payload)

    def republish_round(self, round_number: int) -> BackgroundThread:
        """At start: hand every assignment of a round to paho again, never waiting. A
        broker slow to take them (a backlog, a broker paused) is not fatal: paho keeps
        them and sends them again after a reconnect; a thread logs when the broker has
        them all, or that it is still waiting, until the hub stops. Returns the thread."""
        sent = [(table, self.client.publish(
            wire.topic(self.event, table, wire.Topic.ASSIGNMENT), assignment_bytes(payload),
            qos=1, retain=True)) for table, payload in self.ledger.admin.assignments(
                round_number).items()]
        thread = BackgroundThread(
            lambda _stopping: _watch_republish(round_number, sent, self._stopping), REPUBLISH
        )
        thread.start()
        return thread


def _watch_republish(round_number: int, sent: list[tuple[str, mqtt.MQTTMessageInfo]],
                     stopping: threading.Event) -> None:
    """Until the broker has taken every assignment ``sent`` (or ``stopping``): says once
    if it has not in :data:`PUBLISH_TIMEOUT`, and then when it has."""
    deadline, said = time.monotonic() + PUBLISH_TIMEOUT, False
    while True:
        waiting = [table for table, info in sent if not info.is_published()]
        if not waiting:
            if said:
                log.warning("round %d's assignments: the broker has them all now",
                            round_number)
            return
        if not said and time.monotonic() >= deadline:
            said = True
            log.warning("round %d's assignments re-sent at start: the broker has not "
                        "taken those of table(s) %s in %.0f s; they stay queued and go "
                        "out when it does", round_number, ", ".join(waiting),
                        PUBLISH_TIMEOUT)
        if stopping.wait(0.2):
            return
