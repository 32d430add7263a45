"""No 500 on any string (issue 27, item 8): every route of the hub's app, its path
variables, query strings, forms and JSON bodies given hostile text (lone surrogates as
JSON escapes and as raw bytes, NUL, invalid UTF-8, very long, numbers where text goes
and text where numbers go) answers something other than a server error."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from arbiter.hub.ledger import Ledger
from tests.support.web import PIN
from web.hub import create_hub_app
from web.hub.actions import ACTIONS
from web.hub.feed import VenueFeed

#: Text as it can reach a URL or a form: percent-encoded bytes, so invalid UTF-8 too.
RAW = ["%ED%A0%80", "%ED%B0%80x", "%FF%FE", "%00", "a%2Fb", "..", "x" * 5000, "-1",
       "99999999999999999999999", "%F0%9F%98%80", "T1%0A", "1e309", "NaN"]
#: JSON values: lone surrogates by escape, control characters, wrong types.
JSON = ['"\\ud800"', '"Ana\\udc00"', '"\\u0000"', '"' + "y" * 5000 + '"', "-1",
        "1e400", "[\"\\ud83d\"]", "{\"\\udfff\": 1}", "null", "true", "123456789012345678901"]
#: Every field name the organiser's actions and pages read.
FIELDS = ["name", "rating", "csv", "trf", "round", "board", "table", "who", "result",
          "white", "black", "system", "game", "tables", "tiebreaks", "player", "id",
          "tiebreak-1", "table-1", "length", "rounds"]
#: Streams (they never end: a test client would wait for ever); the login and logout,
#: tried last (a wrong PIN ends the session the rest is tried in).
SKIPPED = {"/api/events", "/organiser/live", "/organiser/login", "/organiser/logout"}


@pytest.fixture
def app(tmp_path: Path) -> Iterator[Any]:
    with Ledger(tmp_path / "hub.sqlite", "club") as ledger:
        app = create_hub_app(ledger, VenueFeed(ledger, timedelta(minutes=10)), tmp_path,
                             test_config={"ADMIN_PIN": PIN, "TESTING": True})
        client = app.test_client()
        # Something to show: players, a round, a game at a table.
        for name in ("Ana", "Ben", "Cy", "Dee"):
            client.post("/api/organiser/players", json={"name": name},
                        headers={"X-Admin-PIN": PIN})
        client.post("/api/organiser/rounds", json={}, headers={"X-Admin-PIN": PIN})
        yield app


def _paths(app: Any) -> Iterator[tuple[str, set[str]]]:
    """Each route with its variables filled by each hostile text, and its methods."""
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static" or rule.rule in SKIPPED:
            continue
        methods = set(rule.methods or ()) & {"GET", "POST"}
        names = re.findall(r"<(?:[^:>]+:)?([^>]+)>", rule.rule)
        if not names:
            yield rule.rule, methods
            continue
        fills = [*RAW, *(ACTIONS if names == ["action"] else ())]
        for text in fills:
            path = rule.rule
            for name in names:
                path = re.sub(r"<(?:[^:>]+:)?" + name + ">", text, path)
            yield path, methods


def test_no_route_answers_500_to_any_string(app: Any) -> None:
    client = app.test_client()
    login = client.get("/organiser/login").get_data(as_text=True)
    token = re.search(r'name="csrf" value="([^"]+)"', login)
    assert token is not None
    client.post("/organiser/login", data={"pin": PIN, "csrf": token.group(1)})
    page = client.get("/organiser").get_data(as_text=True)
    csrf = re.search(r'name="csrf" value="([^"]+)"', page)
    assert csrf is not None, "not logged in"
    failed: list[str] = []

    def check(method: str, path: str, **kwargs: Any) -> None:
        kwargs["headers"] = {"X-Admin-PIN": PIN, "X-CSRF-Token": csrf.group(1)}
        response = client.open(path, method=method, **kwargs)
        if response.status_code >= 500:
            failed.append(f"{method} {path[:80]} {str(kwargs)[:120]}: {response.status_code}")

    for path, methods in _paths(app):
        if "GET" in methods:
            check("GET", path)
            check("GET", path + "?" + "&".join(f"{f}={RAW[0]}" for f in FIELDS))
            check("GET", path + "?round=" + quote(RAW[6]))
        if "POST" in methods:
            for value in JSON:
                body = "{" + ", ".join(f'"{f}": {value}' for f in FIELDS) + "}"
                check("POST", path, data=body.encode(), content_type="application/json")
            for text in RAW:
                form = "&".join(f"{f}={text}" for f in [*FIELDS, "csrf"][:-1])
                form += "&csrf=" + quote(csrf.group(1))
                check("POST", path, data=form.encode(),
                      content_type="application/x-www-form-urlencoded")
    for text in RAW:  # the PIN itself (each a wrong one: the budget's 429 is no 500)
        check("POST", "/organiser/login", data=f"pin={text}&csrf={quote(csrf.group(1))}".encode(),
              content_type="application/x-www-form-urlencoded")
    assert not failed, "\n".join(failed[:30])
