"""No 500 on any string (issue 27, item 8): a player name, a CSV or a table name with half
a UTF-16 pair (a JSON ``\\u`` escape) is a 400 that says why, and nothing is stored."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from arbiter.hub.ledger import Ledger
from tests.support.web import PIN
from web.hub import create_hub_app
from web.hub.feed import VenueFeed


@pytest.mark.parametrize(("path", "body"), [
    ("/api/organiser/players", b'{"name": "Ana\\ud800", "rating": 1500}'),
    ("/api/organiser/players/import", b'{"csv": "name,rating\\nAna\\udc00,1500\\n"}'),
    ("/api/organiser/assign", b'{"round": 1, "board": 1, "table": "T\\udfff"}'),
    ("/api/organiser/players", b'{"name\\ud800": "Ana"}'),
])
def test_lone_surrogate_bodies_are_a_400(tmp_path: Path, path: str, body: bytes) -> None:
    with Ledger(tmp_path / "hub.sqlite", "club") as ledger:
        app = create_hub_app(ledger, VenueFeed(ledger, timedelta(minutes=10)), tmp_path,
                             test_config={"ADMIN_PIN": PIN, "TESTING": True})
        response = app.test_client().post(path, data=body, headers={"X-Admin-PIN": PIN})
        assert response.status_code == 400, response.get_data(as_text=True)
        assert "lone surrogate" in response.get_json()["error"]
        assert ledger.admin.players() == []
