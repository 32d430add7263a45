"""Fixtures for the hub web tests: a ledger, the live feed and the app, served as the hub
serves it (web.kit.aserve); with ``broker_hub`` also a real Mosquitto and the hub's real
MQTT ingest."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from arbiter.hub.broker_link import Ingest
from arbiter.hub.ledger import Ledger
from tests.support.mqtt import Mosquitto
from tests.support.tools import require_tool
from tests.support.web import PIN, live_hub_server
from web.hub import create_hub_app
from web.hub.feed import VenueFeed

EVENT = "club"


@dataclass
class Hub:
    ledger: Ledger
    feed: VenueFeed
    app: Any
    server: Any
    data: Path
    ingest: Ingest | None = None
    broker: Mosquitto | None = None


def _app(ledger: Ledger, feed: VenueFeed, data: Path, publish: Any = None) -> Any:
    return create_hub_app(ledger, feed, data, publish=publish,
                          test_config={"ADMIN_PIN": PIN, "TESTING": True, "SSE_KEEPALIVE": 1.0})


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[Hub]:
    """The hub's app over a fresh ledger, served on a free port (no broker)."""
    data = tmp_path / "hub"
    data.mkdir()
    with Ledger(data / "hub.sqlite", EVENT) as ledger:
        feed = VenueFeed(ledger, timedelta(minutes=10))
        app = _app(ledger, feed, data)
        with live_hub_server(app, streams=8) as server:
            yield Hub(ledger, feed, app, server, data)


@pytest.fixture
def broker_hub(tmp_path: Path) -> Iterator[Hub]:
    """As ``hub``, fed by the real ingest from a real Mosquitto."""
    require_tool("mosquitto")
    broker = Mosquitto(tmp_path / "broker").start()
    data = tmp_path / "hub"
    data.mkdir()
    try:
        with Ledger(data / "hub.sqlite", EVENT) as ledger:
            feed = VenueFeed(ledger, timedelta(minutes=10))
            ingest = Ingest(ledger, EVENT, "127.0.0.1", broker.port)
            ingest.changes.follow(feed)
            ingest.changes.follow_link(feed)
            ingest.start()
            feed.start()  # batched from its own thread, as gg-arbiter hub runs it
            try:
                app = _app(ledger, feed, data, publish=ingest.publish_assignment)
                with live_hub_server(app, streams=8) as server:
                    yield Hub(ledger, feed, app, server, data, ingest, broker)
            finally:
                feed.stop()
                ingest.stop()
    finally:
        broker.stop()


class Table:
    """A lightweight table: publishes the contract's topics as ``gg-arbiter run`` does."""

    def __init__(self, port: int, name: str) -> None:
        self.name = name
        self.prefix = f"gg/{EVENT}/table/{name}/"
        self.seq = 0
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"t-{name}")
        self.client.will_set(self.prefix + "online", b"false", qos=1, retain=True)
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        self.publish("online", b"true", retain=True)

    def publish(self, topic: str, payload: bytes | dict[str, Any], retain: bool = False) -> None:
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.client.publish(self.prefix + topic, body, qos=1, retain=retain).wait_for_publish(10)

    def event(self, body: dict[str, Any]) -> None:
        self.seq += 1
        self.publish("events", {"format": 1, "table": self.name, "seq": self.seq, **body})

    def status(self, state: str, game: int, challenges: int) -> None:
        self.publish("status", {"format": 1, "table": self.name, "state": state,
                                "game_id": game, "challenge_count": challenges}, retain=True)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
