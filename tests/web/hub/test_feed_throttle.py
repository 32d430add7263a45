"""The venue feed's leading-edge throttle: a change after a quiet spell goes at once, one
during a busy spell waits for the rest of the period, never longer."""

from __future__ import annotations

import json
import queue
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from arbiter import wire
from arbiter.hub.ledger import Ledger
from tests.support.clock import FakeClock
from tests.support.contract import challenge, new_game
from web.hub.feed import Throttle, VenueFeed
from web.kit.broadcast import Encoding, Member


def test_throttle_lets_the_first_send_go_at_once_then_one_per_period() -> None:
    clock = FakeClock()
    throttle = Throttle(0.1, clock)
    assert throttle.delay() == 0.0  # nothing sent yet
    throttle.sent(throttle.now())
    clock.now += 0.03
    assert throttle.delay() == pytest.approx(0.07)  # the rest of the period
    clock.now += 0.07
    assert throttle.delay() == 0.0
    throttle.sent(clock.now - 0.02)  # a send that began 20 ms ago counts from its start
    assert throttle.delay() == pytest.approx(0.08)
    clock.now += 5.0
    assert throttle.delay() == 0.0  # after a quiet spell: at once, no gathering wait


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    with Ledger(tmp_path / "hub.sqlite", "club") as led:
        led.events.record("T1", new_game("T1", 1, "g1"))
        led.events.record("T2", new_game("T2", 1, "g1"))
        yield led


def _member(feed: VenueFeed) -> queue.Queue[bytes]:
    q: queue.Queue[bytes] = queue.Queue()
    feed.join(Member(Encoding.IDENTITY, q.put_nowait))
    q.get(timeout=10)  # the opening snapshot
    return q


def _tables(q: queue.Queue[bytes]) -> list[str]:
    data = q.get(timeout=10).decode().split("data: ", 1)[1]
    return sorted(json.loads(data)["patch"])


def test_feed_sends_a_change_after_a_quiet_spell_at_once(ledger: Ledger) -> None:
    # A period of an hour: a feed that waited a period (or a batch) after each wake
    # would send nothing within the test's bound.
    clock = FakeClock()
    feed = VenueFeed(ledger, timedelta(minutes=10), period=3600.0, clock=clock)
    feed.start()
    q = _member(feed)
    try:
        ledger.events.record("T1", challenge("T1", 2, "g1", 1, 0, 1))
        feed.changed("T1", wire.Topic.EVENTS)
        assert _tables(q) == ["T1"]
        clock.now += 3600.0  # a period later: the next change goes at once too
        ledger.events.record("T2", challenge("T2", 2, "g1", 1, 0, 1))
        feed.changed("T2", wire.Topic.EVENTS)
        assert _tables(q) == ["T2"]
    finally:
        feed.stop()
