"""The hub's resend decisions on a fake clock: a run missing for the grace period is asked
for once, a run that fills itself in time is not, the tail the table's status reveals is
asked for too, request ids only grow, and the payload is the one the table reads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from arbiter import wire
from arbiter.fleet.resend import ResendRequest
from arbiter.hub.ledger import Ledger, ResendAsk
from arbiter.hub.resend import Resender, resend_payload
from tests.support.clock import FakeClock
from tests.support.contract import challenge, game_over, new_game

EVENT = "open-2026"
GRACE = 10.0


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    with Ledger(tmp_path / "hub.sqlite", EVENT) as led:
        yield led


class Sent:
    """The requests handed to the broker, in order (the boundary of the resender)."""

    def __init__(self) -> None:
        self.asks: list[ResendAsk] = []

    def __call__(self, ask: ResendAsk) -> None:
        self.asks.append(ask)


def _events(ledger: Ledger, table: str, seqs: list[int]) -> None:
    for seq in seqs:
        event = new_game(table, seq, "1") if seq == 1 else challenge(table, seq, "1", seq - 1,
                                                                      0, 0)
        ledger.events.record(table, event)


def _resender(ledger: Ledger) -> tuple[Resender, FakeClock, Sent]:
    clock, sent = FakeClock(), Sent()
    return Resender(ledger, sent, grace=GRACE, clock=clock), clock, sent


def test_a_gap_is_asked_for_once_after_the_grace_period(ledger: Ledger) -> None:
    resender, clock, sent = _resender(ledger)
    _events(ledger, "T1", [1, 2, 5])
    resender.changed("T1", wire.Topic.EVENTS)
    assert resender.check() == []  # just seen: QoS 1 redelivery may still bring 3 and 4
    clock.now += GRACE - 0.1
    assert resender.check() == []
    clock.now += 0.1
    [ask] = resender.check()
    assert (ask.table, ask.ranges) == ("T1", ((3, 4),))
    assert sent.asks == [ask] and ledger.events.resends()["T1"] == ask
    clock.now += 3 * GRACE
    assert resender.check() == []  # asked already: the retained request waits for the table

    # Event 3 arrives; later 8 shows a new gap, which alone is not asked before its grace.
    _events(ledger, "T1", [3, 8])
    resender.changed("T1", wire.Topic.EVENTS)
    assert resender.check() == []
    clock.now += GRACE
    [again] = resender.check()
    assert again.id != ask.id and again.ranges == ((4, 4), (6, 7))

    _events(ledger, "T1", [4, 6, 7])  # the table served it
    resender.changed("T1", wire.Topic.EVENTS)
    clock.now += GRACE
    assert resender.check() == [] and ledger.events.gaps("T1") == []
    assert ledger.tables.missing("T1") == []


def test_a_gap_filled_within_the_grace_period_is_not_asked_for(ledger: Ledger) -> None:
    resender, clock, sent = _resender(ledger)
    _events(ledger, "T1", [1, 3])
    resender.changed("T1", wire.Topic.EVENTS)
    assert resender.check() == []
    clock.now += GRACE / 2
    _events(ledger, "T1", [2])
    resender.changed("T1", wire.Topic.EVENTS)
    assert resender.check() == []
    clock.now += GRACE
    assert resender.check() == [] and sent.asks == []


def test_the_tail_the_status_reveals_is_asked_for(ledger: Ledger) -> None:
    resender, clock, sent = _resender(ledger)
    _events(ledger, "T2", [1, 2])
    ledger.tables.set_status("T2", {"format": 1, "table": "T2", "state": "idle", "event_seq": 6})
    assert ledger.events.gaps("T2") == [] and ledger.tables.missing("T2") == [(3, 6)]
    resender.changed("T2", wire.Topic.STATUS)
    assert resender.check() == []
    clock.now += GRACE
    [ask] = resender.check()
    assert (ask.table, ask.ranges) == ("T2", ((3, 6),))
    # A table the hub knew of before it started is looked at without a change.
    fresh, fresh_clock, fresh_sent = _resender(ledger)
    fresh.check()
    fresh_clock.now += GRACE
    assert fresh.check() == []  # covered by the request already asked
    assert sent.asks == [ask] and fresh_sent.asks == []


def test_the_organiser_asks_at_once_under_a_new_id_each_time(ledger: Ledger) -> None:
    resender, _clock, sent = _resender(ledger)
    _events(ledger, "T1", [1, 4])
    assert resender.ask("T3") is None  # nothing missing there
    first = resender.ask("T1")
    second = resender.ask("T1")
    assert first is not None and second is not None
    assert first.id != second.id and second.ranges == ((2, 3),)
    assert sent.asks == [first, second]
    assert all(1 <= a.id <= wire.MAX_INT for a in (first, second))


def test_resend_ids_never_repeat_across_ledgers(tmp_path: Path) -> None:
    """Issue 27: a fresh ledger of the same event asked again under ids 1, 2, ... that the
    table had served, and the table ignored them. 50 ledgers asking 5 times each give
    250 different ids (random over 53 bits: a repeat has odds below 1 in 10**11)."""
    ids: list[int] = []
    for n in range(50):
        with Ledger(tmp_path / f"{n}.sqlite", "club") as fresh:
            ids += [fresh.events.ask_resend("T1", [(1, 2)]).id for _ in range(5)]
    assert len(set(ids)) == len(ids) == 250


def test_the_payload_is_the_request_the_table_reads() -> None:
    ask = ResendAsk("7", 4, ((1, 3), (9, 9)), "2026-11-23T22:00:00.000+00:00")
    request = ResendRequest.from_payload(resend_payload(ask))
    assert request == ResendRequest("7", 4, ((1, 3), (9, 9)))


def test_more_runs_than_a_request_carries_are_asked_for_in_turns(ledger: Ledger) -> None:
    """A request names at most 256 runs (a table refuses a longer one as not the wire
    format): the first 256 are asked for, once; the rest once those have come."""
    resender, clock, sent = _resender(ledger)
    held = [1, *range(3, 2 * 300 + 2, 2)]  # 300 runs of one missing: 2, 4, ..., 600
    _events(ledger, "T1", held)
    resender.changed("T1", wire.Topic.EVENTS)
    resender.check()
    clock.now += GRACE
    [ask] = resender.check()
    assert ask.ranges == tuple((n, n) for n in range(2, 2 * 256 + 1, 2))
    request = ResendRequest.from_payload(resend_payload(ask))  # the table can read it
    assert request is not None and request.ranges == ask.ranges
    clock.now += 3 * GRACE
    assert resender.check() == []  # asked already: not again while they are still missing

    _events(ledger, "T1", [a for a, _b in ask.ranges])  # the table served them
    resender.changed("T1", wire.Topic.EVENTS)
    clock.now += GRACE
    [rest] = resender.check()
    assert rest.ranges == tuple((n, n) for n in range(2 * 257, 2 * 300 + 1, 2))
    assert sent.asks == [ask, rest]
    assert ledger.events.ask_resend("T1", [(n, n) for n in range(1, 1000, 2)]).ranges == tuple(
        (n, n) for n in range(1, 2 * 256, 2))  # the organiser's "ask again" too


def _game(ledger: Ledger, table: str, first: int, game: str, kind: str = "flag_captured",
          challenges: int = 1) -> int:
    """A whole game from event ``first`` on: new game, challenges, game over; the next seq."""
    ledger.events.record(table, new_game(table, first, game))
    for n in range(1, challenges + 1):
        ledger.events.record(table, challenge(table, first + n, game, n, 0, n))
    winner = "W" if kind == "flag_captured" else None
    ledger.events.record(table, game_over(table, first + challenges + 1, game, kind, winner))
    return first + challenges + 2


def test_records_missing_are_asked_for_after_the_grace_an_abandoned_ones_once_published(
    ledger: Ledger,
) -> None:
    """Issue 27 item 5: a table's records share one retained topic, so a hub that missed
    one asks for it. A record goes out right after its game's ``game_over``; a sealed
    abandoned game's only once the next game has begun, and before any event of it."""
    resender, clock, sent = _resender(ledger)
    seq = _game(ledger, "T1", 1, "1")
    seq = _game(ledger, "T1", seq, "2", kind="abandoned")  # sealed: the table holds it back
    resender.changed("T1", wire.Topic.EVENTS)
    assert resender.check() == []
    clock.now += GRACE
    [ask] = resender.check()
    assert (ask.ranges, ask.records) == ((), ("1",))  # not game 2's: not published yet
    assert sent.asks == [ask]
    assert ResendRequest.from_payload(resend_payload(ask)) == ResendRequest(
        "T1", ask.id, (), frozenset({"1"}))
    clock.now += GRACE
    assert resender.check() == []  # asked already

    ledger.events.record("T1", new_game("T1", seq, "3"))  # after game 2's record, if sent
    ledger.tables.set_record("T1", "1", {"challenges": []})
    resender.changed("T1", wire.Topic.EVENTS)
    assert resender.check() == []
    clock.now += GRACE
    [again] = resender.check()
    assert again.records == ("2",) and again.id != ask.id
    ledger.tables.set_record("T1", "2", {"challenges": []})
    resender.changed("T1", wire.Topic.RECORD)
    clock.now += GRACE
    assert resender.check() == [] and ledger.tables.missing_records("T1") == []
    assert resender.ask("T1") is None  # the organiser's "ask again": nothing to ask
