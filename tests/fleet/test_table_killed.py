"""``gg-arbiter run --sim`` killed with -9 mid-game: the last will marks the table
offline, and after each restart every event arrives, none with a second sequence number."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

from arbiter.fleet.outbox import CursorFile
from tests.fleet.conftest import GAME
from tests.support.mqtt import Mosquitto, Subscriber, seqs
from tests.support.spawn import Session
from tests.support.waiting import WAIT, wait_until

pytestmark = pytest.mark.timeout(180)


def _table(broker: Mosquitto, data: Path) -> Session:
    session = Session(["run", "--sim", "--data", str(data), "--port", "0",
                       "--broker", broker.url, "--event", "demo", "--table", "7"])
    session.expect("gg-arbiter ready")
    return session


def _last_online(sub: Subscriber) -> bytes | None:
    online = sub.on("/online")
    return online[-1].payload if online else None


def test_table_killed_after_each_challenge_loses_and_renumbers_nothing(
    broker: Mosquitto, tmp_path: Path
) -> None:
    sub = Subscriber(broker.port)
    data = tmp_path / "data"
    kills = 0
    for number, (attacker, defender) in enumerate(GAME, 1):
        session = _table(broker, data)
        try:
            sub.wait(lambda s: _last_online(s) == b"true", what="online")
            mark = len(session.lines)
            session.send(f"attacker {attacker}", f"defender {defender}")
            session.expect(f"[verdict] challenge {number}", after=mark)
        finally:
            session.proc.send_signal(signal.SIGKILL)  # mid-game: no goodbye
            session.proc.wait(WAIT)
            kills += 1
        # The broker publishes the last will: the table shows offline.
        sub.wait(lambda s: _last_online(s) == b"false", what="the last will")

    session = _table(broker, data)  # once more, to publish what the last kill held back
    try:
        total = len(GAME) + 2  # new game, each challenge, game over
        sub.wait(lambda s: set(seqs(s.events())) == set(range(1, total + 1)),
                 timeout=3 * WAIT, what="every event after the restarts")
        sub.wait(lambda s: s.records(1), what="the record")
        by_seq: dict[int, dict[str, Any]] = {}
        for event in sub.events():
            assert by_seq.setdefault(event["seq"], event) == event, "one seq, two events"
        ordered = [by_seq[s] for s in range(1, total + 1)]
        assert [e["type"] for e in ordered] == ["new_game", *["challenge"] * len(GAME),
                                                "game_over"]
        assert [e["number"] for e in ordered[1:-1]] == list(range(1, len(GAME) + 1))
        wait_until(lambda: CursorFile(data).load().seq == total, what="the cursor at the end")
        assert kills == len(GAME)
        print(f"\n{kills} kill -9s: {total} events, {len(sub.events())} deliveries, "
              f"{len(sub.events()) - total} resent with their own seq, 0 missing")
    finally:
        session.kill()
        sub.close()
