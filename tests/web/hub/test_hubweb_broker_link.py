"""The hub's own broker link (issue 19, finding 11): with the real Mosquitto stopped,
every hub page and /api/venue say "hub: broker link down since HH:MM", the tables'
online states are unknown (their last wills cannot reach the hub), and the live
stream says so too; once the broker is back the hub logs "reconnected" and the
pages are healthy again."""

from __future__ import annotations

import logging
import time

import pytest

from tests.support.waiting import wait_until
from tests.support.web import SseClient, http_get, venue_states
from tests.web.hub.conftest import Hub, Table

pytestmark = pytest.mark.timeout(90)

PAGES = ("/", "/rounds", "/standings", "/games", "/organiser/login")
DOWN = "hub: broker link down since "


def _venue(hub: Hub) -> dict:  # type: ignore[type-arg]
    return hub.app.test_client().get("/api/venue").get_json()  # type: ignore[no-any-return]


def test_broker_down_shows_on_every_page_and_reconnection_is_logged(
    broker_hub: Hub, caplog: pytest.LogCaptureFixture
) -> None:
    hub = broker_hub
    assert hub.broker is not None
    caplog.set_level(logging.INFO)
    table = Table(hub.broker.port, "1")
    try:
        wait_until(lambda: _venue(hub)["tables"] and _venue(hub)["tables"][0]["online"] is True)
        assert _venue(hub)["broker"]["up"] is True
        for path in PAGES:
            assert DOWN not in http_get(hub.server, path)[2], path
        sse = SseClient(hub.server.port)
        assert sse.wait(lambda s: any(r.get("1", {}).get("online") is True
                                      for r in venue_states(s.events)))

        hub.broker.stop()
        stopped = time.time()
        wait_until(lambda: _venue(hub)["broker"]["up"] is False, what="the link seen down")
        venue = _venue(hub)
        assert venue["tables"][0]["online"] is None  # unknown, not a stale "online"
        assert abs(venue["broker"]["since"] - stopped) < 10
        since = time.strftime("%H:%M", time.localtime(venue["broker"]["since"]))
        for path in PAGES:
            status, _headers, page = http_get(hub.server, path)
            assert status == 200 and DOWN + since in page, path
        assert "unknown" in http_get(hub.server, "/")[2]
        assert sse.wait(lambda s: any(r.get("1", {}).get("online") is None
                                      for r in venue_states(s.events))), sse.text()
        assert sse.wait(lambda s: any(e.get("type") == "refresh" for e in s.events))

        hub.broker.start()  # same port
        wait_until(lambda: _venue(hub)["broker"]["up"] is True, timeout=30,
                   what="the link back")
        assert any("reconnected to the broker" in r.getMessage() for r in caplog.records)
        for path in PAGES:
            assert DOWN not in http_get(hub.server, path)[2], path
        sse.close()
    finally:
        table.close()
