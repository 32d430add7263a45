"""The table's link to the tournament broker: a paho-mqtt client and a publisher thread.

Nothing here is on the verdict path. The game store tells the link of each
durable append (:meth:`FleetLink.appended`: an event set, no disk, no network),
the device of each status it makes (:meth:`FleetLink.status_changed`, likewise);
the publisher thread derives the outbox from the journals, hands messages to paho (which
queues them while the broker is away and sends them again after a
reconnect) and moves the durable cursor once the broker has acknowledged
them (PUBACK), in order. A broker that is down, slow or refusing the table
is a state on the page and a log line, never an error of the device.

MQTT 5, so that a PUBACK says whether the broker took the message: a broker
that acknowledges with a refusal (0x87 Not authorized: another table's
login, an ACL that forbids the topic) does not move the cursor; the table
shows "refused" with the reason and tries again every REFUSED_RETRY seconds.
"""

from __future__ import annotations

import contextlib
import logging
import ssl
import threading
import time
from collections.abc import Callable
from pathlib import Path

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.reasoncodes import ReasonCode

from arbiter.fleet.assignment import Assignment, AssignmentFile
from arbiter.fleet.errors import AssignmentMessageError, CursorError, SettingsError
from arbiter.fleet.inflight import InFlight
from arbiter.fleet.outbox import Cursor, CursorFile, Outbox, Pending
from arbiter.fleet.payloads import (
    OFFLINE,
    ONLINE,
    encode,
    event_payload,
    record_payload,
    status_payload,
)
from arbiter.fleet.resend_service import ResendService
from arbiter.fleet.settings import TournamentSettings
from arbiter.fleet.state import BrokerReports, BrokerState, FleetState
from arbiter.fleet.statusout import StatusOutbox
from arbiter.mqtt.errors import BrokerTlsError
from arbiter.mqtt.tls import TlsFault, client_context, diagnose, secure
from arbiter.rules.jsondata import JsonDict
from arbiter.storage.journal import GameStore
from arbiter.threads import BackgroundThread, declare
from arbiter.wire import Topic, topic

PUBLISHER = declare("fleet-publisher", __name__,
                    "publishes the table's journal to the venue broker (the outbox)")

log = logging.getLogger(__name__)

#: Messages handed to paho and not yet acknowledged, at most (bounds memory while away).
WINDOW = 100
#: The publisher looks at the journals at least this often (seconds), status or not.
POLL = 1.0
#: Seconds the publisher lets the device finish what it is doing before it works: a
#: challenge is a burst (a reading, the verdict, the LEDs, a status or two) and the
#: publisher's work, done during it, would compete with the verdict for the interpreter.
SETTLE = 0.02
#: Seconds between two saves of the durable cursor while acknowledgements keep coming. Its
#: fsync would otherwise land beside the next challenge's journal fsync; a cursor saved late
#: only means a few events go out again after a crash, with their same sequence numbers.
CURSOR_EVERY = 0.5
#: Seconds between reconnection attempts: the first, and the longest.
RECONNECT_MIN, RECONNECT_MAX = 1, 8
#: Seconds before events the broker refused are offered again (a login or an ACL fixed
#: by the organiser, a broker's ACL reloaded): sooner would only fill the log.
REFUSED_RETRY = 15.0


class FleetLink:
    """Publishes one table's game to the broker of ``settings``; reads its assignment.

    :param settings: a configured tournament (``settings.configured``).
    :param data_dir: the table's data directory (journals, cursor, assignment).
    :param state: what the page shows; the link keeps it up to date.
    :param store: the game store whose appends wake the publisher (without it the
        journals are looked at every POLL seconds only).
    :param status: the device's latest status, read when the link publishes it.
    """

    def __init__(
        self, settings: TournamentSettings, data_dir: Path, state: FleetState, *,
        store: GameStore | None = None, status: Callable[[], JsonDict] | None = None,
    ) -> None:
        if settings.broker is None:
            raise ValueError("no broker configured")
        self.settings = settings
        self.broker = settings.broker
        self._topics = {kind: topic(settings.event, settings.table, kind) for kind in Topic}
        self.state = state
        self._reports = BrokerReports(state, str(self.broker), log)
        self._store = store
        self._assignments = AssignmentFile(data_dir)
        self._cursor_file = CursorFile(data_dir)
        self._outbox = Outbox(data_dir)
        self._resend = ResendService(data_dir, settings.table, WINDOW)
        self._wake = threading.Event()
        self._statuses = StatusOutbox(status, self._wake.set)
        self._thread = BackgroundThread(
            lambda _stopping: self._run(), PUBLISHER, wake=self._wake.set
        )
        self._stop = self._thread.stopping  # also read by the callbacks and the publisher
        self._inflight = InFlight()
        self._hold_until = 0.0  # after a refusal: nothing sent before (monotonic)
        self._drained = threading.Event()  # a pass found nothing left to send or to ack
        self._client: mqtt.Client | None = None
        self._refused = False
        self._tls: ssl.SSLContext | None = None
        self._up = False  # a CONNACK came on the current connection

    # -- the store's and the device's side (cheap, any thread) -------------------

    def appended(self, _game_id: int) -> None:
        """The game store made an append durable: the publisher reads the journals now."""
        self._wake.set()

    def status_changed(self, status: JsonDict) -> None:
        """The device's new status: kept, and the publisher woken (never waits)."""
        self._statuses.changed(status)

    # -- lifecycle -------------------------------------------------------------

    def start(self) -> None:
        """Connect in the background; a broker that is away is retried, never raised."""
        self.state.set_assignment(self._assignments.load())
        # The link changed the fleet state: the page's status was made again from it.
        self.state.add_listener(self._statuses.stale)
        if self._store is not None:
            self._store.appends.add(self.appended)
        if self.broker.tls:
            try:
                self._tls = client_context(self.settings.ca_file)
            except BrokerTlsError as exc:  # no connection at all: never plain instead
                self._reports.problem(f"{exc}: not connecting to {self.broker}", error=True,
                             cause="the CA file cannot be used")
                return
        try:
            password = self.settings.password()
        except SettingsError as exc:
            self._reports.problem(str(exc), error=True, cause="the password file cannot be read")
            password = None
        client = _new_client(self.settings, self._tls, password, self._topics[Topic.ONLINE])
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_connect_fail = self._on_connect_fail
        client.on_publish = self._on_publish
        client.on_subscribe = self._on_subscribe
        client.on_message = self._on_message
        self._client = client
        self.state.set_broker(BrokerState.RECONNECTING, f"connecting to {self.broker}")
        try:
            client.connect_async(self.broker.host, self.broker.port, self.settings.keepalive,
                                 clean_start=True)
        except (OSError, ValueError) as exc:
            self._reports.problem(f"cannot connect to {self.broker}: {exc}", error=True)
        client.loop_start()
        self._thread.start()

    def close(self, timeout: float = 2.0) -> None:
        """Send what is left (for up to ``timeout`` s, if connected), say offline,
        disconnect and stop the threads. Safe twice; what is not acknowledged by
        then goes out after the next start."""
        if self._store is not None:
            self._store.appends.remove(self.appended)
        self.state.remove_listener(self._statuses.stale)
        client = self._client
        if client is not None and client.is_connected() and not self._stop.is_set():
            self._drained.clear()
            self._wake.set()
            self._drained.wait(timeout)
        self._thread.stop(timeout)
        client, self._client = self._client, None
        if client is None:
            return
        if client.is_connected():
            info = client.publish(self._topics[Topic.ONLINE], OFFLINE, qos=1, retain=True)
            with contextlib.suppress(RuntimeError, ValueError):
                info.wait_for_publish(timeout)
            client.disconnect()
        client.loop_stop()

    # -- paho's callbacks (its network thread) ----------------------------------

    def _on_connect(self, client: mqtt.Client, _userdata: object, _flags: object,
                    reason: ReasonCode, _properties: object) -> None:
        if reason.is_failure:
            self._refused = True  # the disconnect that follows says nothing new
            self._reports.problem(f"the broker {self.broker} refused the table: {reason}",
                         cause=f"refused by the broker ({str(reason).lower()})")
            return
        self._refused = False
        self._up = True
        client.publish(self._topics[Topic.ONLINE], ONLINE, qos=1, retain=True)
        client.subscribe([(self._topics[Topic.ASSIGNMENT], 1), (self._topics[Topic.RESEND], 1)])
        self._reports.connected()
        self._statuses.stale()  # the retained status is made fresh at once

    def _on_disconnect(self, _client: mqtt.Client, _userdata: object, _flags: object,
                       reason: ReasonCode, _properties: object) -> None:
        up, self._up = self._up, False
        if self._stop.is_set() or self._refused:
            return
        if not up and self._tls_problem():
            return
        self._reports.problem(f"lost the broker {self.broker} ({reason}): reconnecting")

    def _on_connect_fail(self, _client: mqtt.Client, _userdata: object) -> None:
        self._tls_problem()

    def _tls_problem(self) -> bool:
        """After a connection that failed before the broker answered: report it if TLS is
        why (a certificate, a host name, a plain listener for TLS or the reverse)."""
        problem = diagnose(self.broker.host, self.broker.port, self._tls)
        if problem is not None:
            self._reports.problem(problem.message, error=True,
                         cause=_plain(problem.fault, self.settings.ca_file))
        return problem is not None

    def _on_publish(self, _client: mqtt.Client, _userdata: object, mid: int,
                    reason: ReasonCode, _properties: object) -> None:
        self._inflight.answered(mid, str(reason) if reason.is_failure else None)
        self._wake.set()

    def _on_subscribe(self, _client: mqtt.Client, _userdata: object, _mid: int,
                      reasons: list[ReasonCode], _properties: object) -> None:
        refused = [str(r) for r in reasons if r.is_failure]
        if refused:
            self._reports.refused(f"the broker {self.broker} refused the table's subscription "
                                 f"to its assignment and resend requests ({refused[0]})",
                                 refused[0])

    def _on_message(self, _client: mqtt.Client, _userdata: object,
                    message: mqtt.MQTTMessage) -> None:
        if message.topic == self._topics[Topic.RESEND]:
            if self._resend.take(message.payload):
                self._wake.set()
            return
        if message.topic != self._topics[Topic.ASSIGNMENT]:
            return
        try:
            assignment = Assignment.from_payload(message.payload)
        except AssignmentMessageError as exc:
            log.warning("broker: ignoring an assignment that cannot be used: %s", exc)
            return
        try:
            self._assignments.save(assignment)
        except OSError as exc:
            log.error("broker: cannot keep the assignment in %s: %s", self._assignments.path, exc)
        self.state.set_assignment(assignment)
        log.info("broker: assignment %s", assignment.text if assignment else "cleared")

    # -- the publisher thread -----------------------------------------------------

    def _run(self) -> None:
        try:
            cursor = self._cursor_file.load()
        except CursorError as exc:
            log.error("broker: %s; events are not published", exc)
            self.state.set_broker(BrokerState.RECONNECTING, str(exc))
            cursor = None
        sent = cursor
        saved, saved_at = cursor, time.monotonic()
        try:
            while not self._stop.is_set():
                cursor, sent = self._step(cursor, sent)
                due = time.monotonic() - saved_at >= CURSOR_EVERY
                if cursor is not None and cursor != saved and due:
                    saved, saved_at = self._save(cursor), time.monotonic()
        finally:
            if cursor is not None and cursor != saved:
                self._save(cursor)

    def _step(
        self, cursor: Cursor | None, sent: Cursor | None
    ) -> tuple[Cursor | None, Cursor | None]:
        """One round of the publisher: status, acknowledgements, then what is new."""
        if self._wake.wait(POLL):
            self._stop.wait(SETTLE)  # everything that comes meanwhile is taken at once
        self._wake.clear()
        client = self._client
        if client is None or self._stop.is_set():
            return cursor, sent
        try:
            if cursor is None or sent is None:
                self._publish_status(client, None)
                return cursor, sent
            cursor = self._acknowledged(cursor)
            if self._take_refusals():
                sent = cursor  # what followed the refused event goes out again after it
            inflight = self._inflight
            if len(inflight) < WINDOW and time.monotonic() >= self._hold_until:
                for pending in self._outbox.pending(sent, WINDOW - len(inflight)):
                    inflight.add(self._send(client, pending), pending)
                    sent = pending.after
            # After the events it counts, so the hub never sees a status ahead of them.
            self._publish_status(client, sent.seq)
            self._resend.serve(lambda pending: self._send(client, pending, again=True).mid,
                               sent)
            if not inflight and not self._resend.busy:
                self._drained.set()
        except Exception:  # the link must outlive any surprise; the device is not affected
            log.exception("broker: publisher error")
            self._stop.wait(POLL)
        return cursor, sent

    def _acknowledged(self, cursor: Cursor) -> Cursor:
        """Move the cursor (in memory) over the acknowledged head of the window."""
        moved = self._inflight.advance(cursor, self._resend)
        # Outside the window's lock: the state's listeners (the device's status) call
        # status_changed.
        if moved != cursor:
            self._reports.taken_again()
        return moved

    def _take_refusals(self) -> bool:
        """Report messages the broker refused. One of the outbox's: everything in flight is
        dropped (the cursor stays before the refused event) and sending pauses for
        REFUSED_RETRY seconds; returns True."""
        refusals = self._inflight.take_refusals()
        if not refusals:
            return False
        self._resend.settled(set(refusals))  # refused: the hub asks again if it lacks them
        ours = self._inflight.first_refused(refusals)
        if ours is None:  # a status, an online message or a resent event: nothing to hold back
            self._reports.refused(f"the broker {self.broker} refused a message of the table",
                                 next(iter(refusals.values())))
            return False
        mid, pending = ours
        what = (f"event {pending.seq}" if pending.seq is not None
                else f"game {pending.item.game}'s record")
        self._reports.refused(f"the broker {self.broker} refused {what} on "
                             f"{self._topic(pending)}", refusals[mid])
        self._inflight.drop()
        self._hold_until = time.monotonic() + REFUSED_RETRY
        return True

    def _save(self, cursor: Cursor) -> Cursor:
        """Save ``cursor`` durably; return it (the cursor now on disk, as far as we know)."""
        try:
            self._cursor_file.save(cursor)
        except OSError as exc:  # sent again after a restart: the same seq, harmless
            log.warning("broker: cannot save %s: %s", self._cursor_file.path, exc)
        return cursor

    def _topic(self, pending: Pending) -> str:
        return self._topics[Topic.RECORD if pending.seq is None else Topic.EVENTS]

    def _send(self, client: mqtt.Client, pending: Pending, *,
              again: bool = False) -> mqtt.MQTTMessageInfo:
        """Publish one item at QoS 1. A record goes on the one ``record`` topic (the hub's
        session for the table queues each while the hub is away), retained the first time
        so the latest is kept; ``again`` (a resend) not retained: the latest stays so."""
        item, table = pending.item, self.settings.table
        if pending.seq is None:
            return client.publish(self._topic(pending),
                                  encode(record_payload(item, table=table)), qos=1,
                                  retain=not again)
        payload = encode(event_payload(item, table=table, seq=pending.seq))
        return client.publish(self._topic(pending), payload, qos=1)

    def _publish_status(self, client: mqtt.Client, event_seq: int | None) -> None:
        status = self._statuses.due(event_seq, client.is_connected())
        if status is not None:
            payload = encode(status_payload(status, table=self.settings.table,
                                            event_seq=event_seq))
            client.publish(self._topics[Topic.STATUS], payload, qos=1, retain=True)


def _new_client(
    settings: TournamentSettings, tls: ssl.SSLContext | None, password: str | None,
    will: str,
) -> mqtt.Client:
    """The table's paho client: MQTT 5 (PUBACK reason codes: a refused publish is seen),
    its login and TLS, its last will on ``will``, the reconnection delays."""
    client = mqtt.Client(CallbackAPIVersion.VERSION2,
                         client_id=f"gg-{settings.event}-{settings.table}",
                         protocol=mqtt.MQTTv5)
    if settings.broker is not None and settings.broker.username:
        client.username_pw_set(settings.broker.username, password)
    secure(client, tls)
    client.will_set(will, OFFLINE, qos=1, retain=True)
    client.reconnect_delay_set(RECONNECT_MIN, RECONNECT_MAX)
    return client


def _plain(fault: TlsFault, ca_file: Path | None) -> str:
    """The fault in a few words; with no CA file the system's CAs are the ones meant."""
    if fault is TlsFault.NOT_SIGNED and ca_file is None:
        return "certificate not signed by a CA this table trusts"
    return fault.value
