"""What the hub publishes to the tables: each table's retained ``assignment`` and
``resend`` request, QoS 1, waited for until the broker has them.

The serving hub publishes through its ingest's client (:mod:`arbiter.hub.broker_link`);
the command line, while a hub serves, through :func:`publish_once`'s own short-lived
client, so the serving hub's persistent session is left alone.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping, Sequence

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from arbiter import wire
from arbiter.hub.errors import IngestError
from arbiter.hub.ledger import ResendAsk
from arbiter.hub.resend import resend_payload
from arbiter.mqtt.tls import check_listener, secure

#: Seconds to wait for the broker to take a published assignment.
PUBLISH_TIMEOUT = 10.0


def publish_once(
    host: str,
    port: int,
    event: str,
    assignments: Mapping[str, wire.AssignmentMessage | None],
    *,
    username: str | None = None,
    password: str | None = None,
    tls: ssl.SSLContext | None = None,
    resends: Sequence[ResendAsk] = (),
) -> None:
    """Publish retained assignments (None clears) and resend requests from a short-lived
    client, then disconnect.

    For the command line while ``gg-arbiter hub`` serves: a client id of its own,
    so the serving hub's persistent session is left alone.
    """
    messages = [(wire.topic(event, t, wire.Topic.ASSIGNMENT), assignment_bytes(a),
                 f"assignment for {t!r}") for t, a in assignments.items()]
    messages += [(wire.topic(event, r.table, wire.Topic.RESEND), resend_payload(r),
                  f"resend request for {r.table!r}") for r in resends]
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="", clean_session=True)
    if username:
        client.username_pw_set(username, password)
    secure(client, tls)
    check_listener(host, port, tls)
    try:
        client.connect(host, port, keepalive=30)
    except OSError as exc:
        raise IngestError(f"no connection to the broker at {host}:{port}: {exc}") from None
    client.loop_start()
    try:
        for topic, payload, what in messages:
            publish_retained(client, topic, payload, what)
    finally:
        client.disconnect()
        client.loop_stop()


def publish_retained(client: mqtt.Client, topic: str, payload: bytes, what: str) -> None:
    """Publish a retained QoS 1 message and wait until the broker has it.

    :raises IngestError: the broker did not take it within :data:`PUBLISH_TIMEOUT`.
    """
    info = client.publish(topic, payload, qos=1, retain=True)
    try:
        info.wait_for_publish(PUBLISH_TIMEOUT)
    except (ValueError, RuntimeError) as exc:
        raise IngestError(f"{what} not sent: {exc}") from None
    if not info.is_published():
        raise IngestError(f"{what} not taken by the broker in time")


def assignment_bytes(assignment: wire.AssignmentMessage | None) -> bytes:
    """A retained assignment's payload: empty (clearing it) for None."""
    return b"" if assignment is None else wire.encode(assignment)
