"""The hub pairs a Swiss round in its pairing process (arbiter/tournament/swiss/apart.py):
while a 500-player round is paired, ``/api/venue`` keeps answering at once; an event too
large for the machine is refused with a clear error."""

from __future__ import annotations

import http.client
import json
import os
import statistics
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from arbiter.tournament.swiss import BYTES_PER_PAIR, PAIRING_MEMORY
from arbiter.tournament.swiss.apart import pairing_process
from arbiter.tournament.trf import import_trf
from tests.support.venue import ORGANISER
from tests.web.hub.conftest import Hub

pytestmark = pytest.mark.timeout(600)

GOLDEN = Path(__file__).parents[2] / "tournament" / "golden"


def _request(hub: Hub, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    """One JSON request; no timeout short enough to cut a big pairing."""
    conn = http.client.HTTPConnection("127.0.0.1", hub.server.port, timeout=600)
    try:
        conn.request(method, path, body=None if body is None else json.dumps(body),
                     headers={"Content-Type": "application/json", **ORGANISER})
        response = conn.getresponse()
        raw = response.read()
        return response.status, json.loads(raw) if raw else None
    finally:
        conn.close()


def test_the_venue_answers_while_a_big_round_is_paired(hub: Hub) -> None:
    event = import_trf((GOLDEN / "dutch-500p-4r-seed14.trf").read_text(encoding="utf-8"))
    last = max(g.pairing.round for g in event.games)
    hub.ledger.unplayed.import_event(
        event.players, [g for g in event.games if g.pairing.round < last], event.total_rounds
    )
    answer: list[tuple[int, Any]] = []
    paired = threading.Event()

    def pair() -> None:
        answer.append(_request(hub, "POST", "/api/organiser/rounds", {"system": "swiss"}))
        paired.set()

    pairing = threading.Thread(target=pair, name="test-pair", daemon=True)
    pairing.start()
    during: list[float] = []  # each venue answer that came while the round was paired
    while not paired.is_set():
        start = time.perf_counter()
        status, venue = _request(hub, "GET", "/api/venue")
        took = time.perf_counter() - start
        assert status == 200 and "tables" in venue
        if not paired.is_set():
            during.append(took)
    pairing.join()
    assert answer[0][0] == 200, answer
    # The pairing's work was the pairing process's, not the server's ...
    worker = pairing_process()
    assert worker is not None
    with open(f"/proc/{worker}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    assert (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK") >= 0.5
    # ... it took long enough to be seen, and the venue never waited on it.
    assert len(during) >= 5, during
    assert statistics.median(during) < 0.25, during
    assert max(during) < 2.0, during
    # And the round stored is the engine's (bbpPairings, the golden file's last round).
    theirs = {(g.pairing.white, g.pairing.black) for g in event.games
              if g.pairing.round == last}
    ours = {(r.pairing.white, r.pairing.black) for r in hub.ledger.admin.pairings()
            if r.pairing.round == last}
    assert ours == theirs


def test_an_event_too_large_to_pair_is_refused_clearly(hub: Hub) -> None:
    most = 2
    while BYTES_PER_PAIR * (most + 1) * most // 2 <= PAIRING_MEMORY:
        most += 1
    roster = "name,rating\n" + "".join(f"Player {i:05d},{1000 + i % 900}\n"
                                       for i in range(most + 1))
    hub.ledger.admin.import_players_csv(roster)
    status, answer = _request(hub, "POST", "/api/organiser/rounds", {"system": "swiss"})
    assert status == 409, answer
    assert answer["error"].startswith(f"{most + 1} players: pairing them would take about")
    assert f"a Swiss round pairs at most {most} players" in answer["error"]
    assert hub.ledger.admin.rounds() == []  # nothing paired, nothing stored
