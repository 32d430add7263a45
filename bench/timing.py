"""What the benchmarks share: quantiles of timed samples, and the organiser's logged-in
client on a hub app built over a ledger (no server: the app's own cost)."""

from __future__ import annotations

import re
import time
from datetime import timedelta
from pathlib import Path

from flask.testing import FlaskClient

from arbiter.hub.ledger import Ledger
from web.hub import create_hub_app
from web.hub.feed import VenueFeed

#: The organiser PIN of the benchmarks' hubs.
PIN = "246813"


def percentile(samples: list[float], q: float) -> float:
    """The ``q`` quantile of ``samples`` (nearest rank); NaN when there is none."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def organiser_client(ledger: Ledger, data: Path) -> FlaskClient:
    """A test client of the hub app over ``ledger``, logged in as the organiser."""
    app = create_hub_app(ledger, VenueFeed(ledger, timedelta(minutes=10)), data,
                         test_config={"ADMIN_PIN": PIN, "TESTING": True})
    client = app.test_client()
    login = client.get("/organiser/login").get_data(as_text=True)
    token = re.search(r'name="csrf" value="([^"]+)"', login)
    if token is None:
        raise RuntimeError("the organiser's login page has no CSRF token")
    client.post("/organiser/login", data={"pin": PIN, "csrf": token.group(1)})
    return client


def time_gets(client: FlaskClient, path: str, fetches: int) -> tuple[list[float], int]:
    """GET ``path`` ``fetches`` times: each answer's milliseconds, and the last one's size."""
    times, size = [], 0
    for _ in range(fetches):
        started = time.perf_counter()
        response = client.get(path)
        times.append((time.perf_counter() - started) * 1000)
        if response.status_code != 200:
            raise RuntimeError(f"GET {path}: {response.status_code}")
        size = len(response.get_data())
    return times, size
