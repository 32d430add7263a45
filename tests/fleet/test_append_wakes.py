"""The game store tells the publisher of each durable append: not the status page.

The publisher's poll is set to a minute here and the device's statuses reach it
not at all, so only the store's append listener can make a challenge go out
within seconds; its event carries what the rules decide (a side and a public
word, never a rank).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from arbiter.fleet import link as link_module
from arbiter.fleet.link import FleetLink
from arbiter.rules.pieces import Piece
from arbiter.rules.verdict import resolve
from tests.fleet.conftest import GAME, TableFactory
from tests.support.mqtt import Mosquitto, Subscriber
from tests.support.web import rank_leaks

pytestmark = pytest.mark.timeout(120)


def test_the_store_wakes_the_publisher_after_each_append(
    broker: Mosquitto, make_table: TableFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(link_module, "POLL", 60.0)
    sub = Subscriber(broker.port)
    table = make_table(broker.url)
    assert table.link is not None
    settings = table.link.settings
    table.link.close()
    # A link told of appends by the store only: no status listener, no status source.
    table.link = FleetLink(settings, table.arbiter.data_dir, table.arbiter.fleet,
                           store=table.arbiter.store)
    table.link.start()
    sub.wait(lambda s: len(s.events()) >= 1, what="the new game's event", timeout=10)
    for number, (attacker, defender) in enumerate(GAME[:2], start=1):
        table.rig.challenge(attacker, defender)
        table.rig.empty()
        # Well inside the minute-long poll: the append woke the publisher.
        sub.wait(lambda s: _challenge(s, number) is not None,  # noqa: B023 (waited here)
                 what=f"challenge {number} published", timeout=10)
        event = _challenge(sub, number)
        assert event is not None
        verdict = resolve(Piece.parse(attacker).rank, Piece.parse(defender).rank)
        assert (event["attacker_side"], event["result"]) == (
            Piece.parse(attacker).side.letter, verdict.survivor.public_word)
        assert not rank_leaks(json.dumps(event))


def _challenge(sub: Subscriber, number: int) -> dict[str, Any] | None:
    return next((e for e in sub.events() if e.get("number") == number), None)
