"""A thousand phones on the venue (issue 26, item 1): the hub's real app on its real
server (web.kit.aserve), 1,000 real sockets on ``/api/events``, each getting what the
feed publishes; the 1,001st of a hub sized for 1,000 refused at once, as JSON that
names the page's polling route, and served once a place is free."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from arbiter import threads
from arbiter.app.cli import main
from arbiter.hub.ledger import Ledger
from tests.support.crowd import close_all, hold_streams, timed_get
from tests.support.mqtt import mosquitto, port_open
from tests.support.spawn import free_port, gg_arbiter
from tests.support.sse import streams_showing
from tests.support.waiting import wait_until
from tests.support.web import PIN
from web.hub import create_hub_app
from web.hub.feed import VenueFeed
from web.kit.aserve import AsyncWebServer, make_async_server

pytestmark = pytest.mark.timeout(300)

RUNNER = threads.declare("test-hub-viewers", __name__, "runs the hub's server in a test")


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[AsyncWebServer, VenueFeed]]:
    with Ledger(tmp_path / "hub.sqlite", "club") as ledger:
        ledger.admin.import_players_csv("name,rating\nAna,1500\nBen,1400\n")
        feed = VenueFeed(ledger, timedelta(minutes=10))
        app = create_hub_app(ledger, feed, tmp_path,
                             test_config={"ADMIN_PIN": PIN, "SSE_KEEPALIVE": 60.0})
        server = make_async_server(app, "127.0.0.1", 0, streams=1000)
        runner = threads.BackgroundThread(lambda _s: server.run(), RUNNER, wake=server.close)
        runner.start()
        try:
            yield server, feed
        finally:
            runner.stop(15.0)
            server.close()


@pytest.mark.slow  # seconds of real time
def test_a_thousand_viewers_each_get_the_update_and_the_next_is_refused_then_served(
    served: tuple[AsyncWebServer, VenueFeed],
) -> None:
    server, feed = served
    socks = hold_streams(server.port, 1000, timeout=120)
    try:
        refused = timed_get(server.port, "/api/events", timeout=10)
        assert refused.status == 503 and refused.seconds < 5
        body = refused.json()
        assert isinstance(body, dict) and "/api/venue" in body["error"]
        assert refused.headers["retry-after"] == "30"
        feed.refresh()  # the organiser paired, say: every page is told to fetch again
        assert streams_showing(socks, b'"type":"refresh"', 60) == 1000
        venue = timed_get(server.port, "/api/venue", timeout=10)
        assert venue.status == 200 and json.loads(venue.body)["event"] == "club"
    finally:
        close_all(socks)
    hub = server.app.extensions["arbiter_streams"]
    wait_until(lambda: hub.admitted == 0, timeout=5)
    viewer = hold_streams(server.port, 1, timeout=10)
    close_all(viewer)


@pytest.mark.slow  # a broker and a hub process
def test_the_hub_command_serves_as_many_viewers_as_it_is_told(tmp_path: Path) -> None:
    """``gg-arbiter hub --viewers 3``: three streams, the fourth refused at once."""
    env = {k: v for k, v in os.environ.items() if k != "GPIOZERO_PIN_FACTORY"}
    web = free_port()
    with mosquitto(tmp_path / "broker") as broker:
        proc = subprocess.Popen(
            [*gg_arbiter(), "hub", "--event", "club", "--data", str(tmp_path / "hub"),
             "--broker", f"mqtt://127.0.0.1:{broker}", "--host", "127.0.0.1",
             "--port", str(web), "--viewers", "3"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        try:
            wait_until(lambda: port_open(web) or proc.poll() is not None, timeout=30)
            assert proc.poll() is None, "the hub did not start"
            socks = hold_streams(web, 3)
            try:
                refused = timed_get(web, "/api/events")
                assert refused.status == 503 and refused.seconds < 5
            finally:
                close_all(socks)
        finally:
            proc.terminate()
            assert proc.wait(15) == 0


def test_the_hub_command_refuses_a_viewer_count_below_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["hub", "--event", "club", "--data", str(tmp_path), "--broker",
                 "mqtt://127.0.0.1:1", "--viewers", "0"]) == 2
    assert "at least 1 viewer, not 0" in capsys.readouterr().err
