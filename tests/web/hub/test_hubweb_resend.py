"""The organiser's resend: the gap list says when a resend was asked, its "ask again"
button (behind the PIN, with the CSRF token) and the JSON API twin publish the retained
request on a real Mosquitto through the hub's real MQTT client."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from arbiter.hub.broker_link import Ingest
from arbiter.hub.ledger import Ledger
from arbiter.hub.resend import Resender
from tests.support.mqtt import Mosquitto, Subscriber
from tests.support.organiser import csrf as _csrf
from tests.support.tools import require_tool
from tests.support.waiting import wait_until
from tests.support.web import PIN
from tests.web.hub.conftest import EVENT, Table
from web.hub import create_hub_app
from web.hub.feed import VenueFeed

pytestmark = pytest.mark.timeout(60)

API = {"X-Admin-PIN": PIN}
TOPIC = f"gg/{EVENT}/table/T1/resend"




@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Any, Ledger, Mosquitto]]:
    """The hub's app with its ingest and resender on a real broker; table T1 has sent
    events 1 and 3 (2 is missing)."""
    require_tool("mosquitto")
    broker = Mosquitto(tmp_path / "broker").start()
    data = tmp_path / "hub"
    data.mkdir()
    try:
        with Ledger(data / "hub.sqlite", EVENT) as ledger:
            feed = VenueFeed(ledger, timedelta(minutes=10))
            ingest = Ingest(ledger, EVENT, "127.0.0.1", broker.port)
            ingest.start()
            resender = Resender(ledger, ingest.publish_resend, grace=3600)
            app = create_hub_app(ledger, feed, data, publish=ingest.publish_assignment,
                                 resend=resender.ask,
                                 test_config={"ADMIN_PIN": PIN, "TESTING": True})
            table = Table(broker.port, "T1")
            try:
                table.event({"game": "1", "type": "new_game", "assignment": None, "at": 1.0})
                table.seq += 1  # event 2 never sent
                table.event({"game": "1", "type": "challenge", "number": 2,
                             "attacker_side": "W", "result": "split",
                             "eliminated": {"W": 1, "B": 1}, "at": 2.0})
                wait_until(lambda: ledger.events.last_seq("T1") == 3, what="events 1 and 3 held")
                yield app, ledger, broker
            finally:
                table.close()
                ingest.stop()
    finally:
        broker.stop()


def test_the_ask_again_button_needs_the_pin_and_the_token_and_publishes(
    served: tuple[Any, Ledger, Mosquitto],
) -> None:
    app, ledger, broker = served
    reader = Subscriber(broker.port, TOPIC)
    client = app.test_client()
    assert client.get("/organiser").status_code == 302  # behind the PIN
    token = _csrf(client.get("/organiser/login").get_data(as_text=True))
    refused = client.post("/organiser/resend", data={"table": "T1", "csrf": token})
    assert refused.status_code == 403  # not logged in
    assert ledger.events.resends() == {}
    client.post("/organiser/login", data={"pin": PIN, "csrf": token})
    html = client.get("/organiser").get_data(as_text=True)
    assert "Table T1 events missing: 2–2" in html and "Ask the table to resend" in html
    assert "resend asked at" not in html
    assert client.post("/organiser/resend", data={"table": "T1"}).status_code == 400  # no token
    assert ledger.events.resends() == {}

    token = _csrf(html)
    done = client.post("/organiser/resend", data={"table": "T1", "csrf": token})
    assert done.status_code == 302
    reader.wait(lambda s: s.on("/resend"), what="the retained request on the broker")
    asked = ledger.events.resends()["T1"].id
    assert reader.on("/resend")[-1].json() == {"format": 1, "table": "T1", "id": asked,
                                               "ranges": [[2, 2]]}
    html = client.get("/organiser").get_data(as_text=True)
    assert re.search(r"resend asked at \d\d:\d\d UTC", html), html
    assert "Ask again" in html and f"request {asked}" in html  # the flashed message
    reader.close()


def test_the_api_asks_too_and_says_when_nothing_is_missing(
    served: tuple[Any, Ledger, Mosquitto],
) -> None:
    app, ledger, broker = served
    client = app.test_client()
    assert client.post("/api/organiser/resend", json={"table": "T1"}).status_code == 401
    assert ledger.events.resends() == {}
    answer = client.post("/api/organiser/resend", json={"table": "T1"}, headers=API)
    first = ledger.events.resends()["T1"].id
    assert answer.status_code == 200 and f"request {first}" in answer.get_json()["done"]
    nothing = client.post("/api/organiser/resend", json={"table": "T9"}, headers=API)
    assert nothing.status_code == 400 and "no event is missing" in nothing.get_json()["error"]
    every = client.post("/api/organiser/resend", json={}, headers=API)  # every table
    second = ledger.events.resends()["T1"].id
    assert second != first  # asked again: a new id
    assert every.status_code == 200 and f"table T1 (request {second})" in every.get_json()["done"]
    tables = client.get("/api/organiser/tables", headers=API).get_json()
    assert tables["gaps"] == {"T1": [[2, 2]]}
    assert tables["resends"]["T1"]["id"] == second
    assert tables["resends"]["T1"]["ranges"] == [[2, 2]]
    late = Subscriber(broker.port, TOPIC)  # retained: a table coming later gets the last one
    late.wait(lambda s: s.on("/resend"), what="the retained request")
    assert json.loads(late.on("/resend")[-1].payload)["id"] == second
    late.close()
