"""The wire format's one validation (arbiter.wire.parse): what a table may send the hub.

The poison pills are the red team's of issue 19 (integers of 2**63 and more where SQLite
holds signed 64 bits, non-finite and absurd times, a forged ``state``, oversized payloads)
and their kin (``true`` for a number, a name too long, an unknown type). Each is refused
with a WireFormatError, never passed on; the honest messages beside them parse.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from arbiter import wire
from arbiter.device.sequence import DeviceState
from arbiter.rules.game import EndingKind
from arbiter.rules.ranks import ARMY_SIZE
from arbiter.wire.errors import PayloadTooLargeError, TopicMismatchError, WireFormatError
from tests.support.contract import AT, assignment, challenge, game_over, new_game

#: Past SQLite's INTEGER (signed 64 bits): what raised OverflowError in the ledger.
HUGE = 2**63


def _raw(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def _event(kind: str, **change: Any) -> bytes:
    base: dict[str, Any] = {
        "new_game": dict(new_game("T1", 1, "g1", assignment(1, 1, "Ana", "Ben"))),
        "challenge": dict(challenge("T1", 2, "g1", 1, 0, 1)),
        "game_over": dict(game_over("T1", 3, "g1", "flag_captured", "W")),
    }[kind]
    return _raw({**base, **change})


HONEST_STATUS = {"format": 1, "table": "T1", "state": "waiting", "seq": 3, "event_seq": 2,
                 "game_id": 1, "challenge_count": 1, "started_at": AT,
                 "eliminated": {"W": 0, "B": 1}}


def test_wire_parses_honest_messages_as_sent() -> None:
    for kind in ("new_game", "challenge", "game_over"):
        raw = _event(kind)
        assert wire.parse(wire.Topic.EVENTS, raw, table="T1") == json.loads(raw)
    assert wire.parse(wire.Topic.STATUS, _raw(HONEST_STATUS), table="T1") == HONEST_STATUS
    assert wire.parse(wire.Topic.ONLINE, b"true") is True
    assert wire.parse(wire.Topic.ONLINE, b"false") is False
    assert wire.parse(wire.Topic.STATUS, b"", table="T1") is None  # a cleared retained topic


def test_wire_keeps_only_the_known_fields_of_a_status() -> None:
    sent = {**HONEST_STATUS, "shout": "<script>", "verdicts": []}
    assert wire.parse(wire.Topic.STATUS, _raw(sent), table="T1") == {**HONEST_STATUS,
                                                                      "verdicts": []}


POISON_EVENTS = {
    "seq 2**63": _event("challenge", seq=HUGE),
    "seq 2**53 (past the JSON-safe bound)": _event("challenge", seq=2**53),
    "seq true": _event("challenge", seq=True),
    "seq 0": _event("challenge", seq=0),
    "number 2**63": _event("challenge", number=HUGE),
    "number 10**30": _event("challenge", number=10**30),
    "eliminated 2**63": _event("challenge", eliminated={"W": HUGE, "B": 0}),
    "eliminated past an army": _event("challenge", eliminated={"W": ARMY_SIZE + 1, "B": 0}),
    "eliminated true": _event("challenge", eliminated={"W": True, "B": 0}),
    "assignment round 2**63": _event("new_game", assignment={**assignment(1, 1, "A", "B"),
                                                             "round": HUGE}),
    "assignment board 2**63": _event("new_game", assignment={**assignment(1, 1, "A", "B"),
                                                             "board": HUGE}),
    "assignment name of 65": _event("new_game", assignment=assignment(1, 1, "A" * 65, "B")),
    "at 1e300": _event("challenge", at=1e300),
    "at Infinity": _event("challenge", at=float("inf")),
    "at NaN": _event("challenge", at=float("nan")),
    "at -1": _event("challenge", at=-1),
    "at a word": _event("challenge", at="now"),
    "type reveal": _event("challenge", type="reveal"),
    "result a rank": _event("challenge", result="W:SPY"),
    "ending kind unknown": _event("game_over", ending={"kind": "timeout", "winner": "W",
                                                       "at": AT}),
    "ending winner X": _event("game_over", ending={"kind": "flag_home", "winner": "X",
                                                   "at": AT}),
    "format 2": _event("challenge", format=2),
    "game with a slash": _event("challenge", game="a/b"),
    "over 4 KiB": _event("challenge", pad="x" * 4096),
    "a number of 5000 digits": b'{"seq": ' + b"9" * 5000 + b"}",
    "nested 10000 deep": b"[" * 2000 + b"]" * 2000,
    "not UTF-8": b'{"seq": "\xff"}',
    "not an object": b"[1, 2]",
}


@pytest.mark.parametrize("raw", POISON_EVENTS.values(), ids=POISON_EVENTS.keys())
def test_wire_refuses_poison_events(raw: bytes) -> None:
    with pytest.raises(WireFormatError):
        wire.parse(wire.Topic.EVENTS, raw, table="T1")


def test_wire_refusal_names_the_seq_it_could_read() -> None:
    with pytest.raises(WireFormatError) as refused:
        wire.parse(wire.Topic.EVENTS, _event("challenge", seq=7, number=10**6), table="T1")
    assert refused.value.seq == 7


def test_wire_refuses_an_event_of_another_table() -> None:
    with pytest.raises(TopicMismatchError):
        wire.parse(wire.Topic.EVENTS, _event("challenge"), table="T2")


POISON_STATUSES = {
    "forged state": {**HONEST_STATUS, "state": "W:SPY took B:5*G"},
    "event_seq 2**63": {**HONEST_STATUS, "event_seq": HUGE},
    "started_at 1e300": {**HONEST_STATUS, "started_at": 1e300},
    "challenge_count true": {**HONEST_STATUS, "challenge_count": True},
    "no state": {"format": 1, "table": "T1"},
}


@pytest.mark.parametrize("status", POISON_STATUSES.values(), ids=POISON_STATUSES.keys())
def test_wire_refuses_poison_statuses(status: dict[str, Any]) -> None:
    with pytest.raises(WireFormatError):
        wire.parse(wire.Topic.STATUS, _raw(status), table="T1")


def test_wire_refuses_an_oversized_payload_before_reading_it() -> None:
    # 8 MB of a status: refused on its length (a JSON parser would have to read it all).
    raw = b'{"format": 1, "table": "T1", "state": "idle", "message": "' + b"x" * 8_000_000
    with pytest.raises(PayloadTooLargeError):
        wire.parse(wire.Topic.STATUS, raw, table="T1")
    assert wire.MAX_BYTES[wire.Topic.STATUS] == 8 * 1024
    assert wire.MAX_BYTES[wire.Topic.RECORD] == 64 * 1024


def test_wire_refuses_poison_resends_and_assignments() -> None:
    resend = {"format": 1, "table": "T1", "id": 10**30, "ranges": [[1, 2]]}
    with pytest.raises(WireFormatError):
        wire.parse(wire.Topic.RESEND, _raw(resend), table="T1")
    with pytest.raises(WireFormatError):
        wire.parse(wire.Topic.RESEND, _raw({**resend, "id": 3, "ranges": [[1, HUGE]]}))
    for change in ({"round": HUGE}, {"board": 10**30}, {"round": True}, {"white": ""}):
        with pytest.raises(WireFormatError):
            wire.parse(wire.Topic.ASSIGNMENT,
                       _raw({"format": 1, **assignment(1, 1, "A", "B"), **change}))


def test_wire_refuses_a_record_with_absurd_times() -> None:
    record: dict[str, Any] = {"id": 1, "started_at": AT, "challenges": [{"number": 1, "at": AT}],
                              "ending": {"kind": "draw", "winner": None, "at": AT}}
    message: dict[str, Any] = {"format": 1, "table": "T1", "game": 1, "record": record}
    got = wire.parse(wire.Topic.RECORD, _raw(message), table="T1", game="1")
    assert got == dict(message)
    for bad in ({"started_at": 1e300}, {"challenges": [{"number": 1, "at": float("inf")}]}):
        with pytest.raises(WireFormatError):
            wire.parse(wire.Topic.RECORD, _raw(dict(message, record={**record, **bad})),
                       table="T1", game="1")
    with pytest.raises(TopicMismatchError):
        wire.parse(wire.Topic.RECORD, _raw(message), table="T1", game="2")


def test_wire_enumerations_are_the_devices_and_the_rules() -> None:
    assert set(wire.STATES) == {s.value for s in DeviceState}
    assert set(wire.ENDINGS) == {k.value for k in EndingKind}


def test_wire_topics_of_a_table() -> None:
    assert wire.topic_of("events") == (wire.Topic.EVENTS, None)
    assert wire.topic_of("record/12") == (wire.Topic.RECORD, "12")
    assert wire.topic_of("record/") is None
    assert wire.topic_of("events/extra") is None
    assert wire.topic_of("shout") is None
