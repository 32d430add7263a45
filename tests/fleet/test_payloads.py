"""Pure tests: payloads from a game, the outbox's numbering, assignments, settings."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, cast

import pytest

from arbiter import __version__, wire
from arbiter.device.sequence import DeviceState
from arbiter.device.status import StatusFacts, build_status
from arbiter.drivers.readers.base import SlotReading, SlotState
from arbiter.fleet.assignment import Assignment, AssignmentFile
from arbiter.fleet.errors import AssignmentMessageError, CursorError, SettingsError
from arbiter.fleet.outbox import Cursor, CursorFile, Outbox
from arbiter.fleet.payloads import (
    OutboxItem,
    RecordBody,
    encode,
    event_payload,
    game_items,
    record_payload,
    status_payload,
)
from arbiter.fleet.settings import BrokerAddress, TournamentSettings
from arbiter.fleet.state import FleetState
from arbiter.mqtt.errors import BrokerAddressError
from arbiter.rules.contenders import Contenders
from arbiter.rules.game import EndingKind
from arbiter.rules.pieces import Piece
from arbiter.rules.ranks import Side
from arbiter.rules.verdict import Role
from arbiter.storage.journal import GameStore
from tests.fleet.conftest import GAME
from tests.support.web import rank_leaks


def _pair(attacker: str, defender: str) -> Contenders:
    return Contenders.untagged(Piece.parse(attacker), Piece.parse(defender))


def _kind(item: OutboxItem) -> str:
    return "record" if item.kind is None else item.kind.value


def test_challenge_events_say_the_side_and_the_survivor_as_the_rules_decide(
    tmp_path: Path,
) -> None:
    """Built from the recorded challenges: RULES.md's outcomes of conftest.GAME (the spy
    takes a general, a private the spy, equal ranks split, a general takes a lieutenant),
    the fallen counted per side, and no rank anywhere."""
    with GameStore(tmp_path) as store:
        for attacker, defender in GAME[:-1]:
            store.accept(_pair(attacker, defender))
        items = game_items(store.current)
        ats = [c.at for c in store.current.challenges]
    events = [cast(wire.ChallengeBody, item.body) for item in items
              if item.kind is wire.EventType.CHALLENGE]
    assert [(e["number"], e["attacker_side"], e["result"]) for e in events] == [
        (1, "W", "attacker"), (2, "B", "attacker"), (3, "W", "split"), (4, "B", "defender")]
    assert [e["eliminated"] for e in events] == [
        {"W": 0, "B": 1}, {"W": 1, "B": 1}, {"W": 2, "B": 2}, {"W": 2, "B": 3}]
    assert [e["at"] for e in events] == ats
    assert not rank_leaks(json.dumps([item.body for item in items]))


def test_items_of_a_game_on_hold_no_rank_and_no_record(tmp_path: Path) -> None:
    with GameStore(tmp_path) as store:
        for attacker, defender in GAME[:-1]:
            store.accept(_pair(attacker, defender))
        items = game_items(store.current)
    assert [_kind(i) for i in items] == ["new_game", *["challenge"] * (len(GAME) - 1)]
    assert [i.index for i in items] == list(range(len(items)))
    text = json.dumps([event_payload(i, table="7", seq=n) for n, i in enumerate(items, 1)])
    assert rank_leaks(text) == []
    assert "record" not in [_kind(i) for i in items]


def test_items_of_an_ended_game_end_with_game_over_then_the_record(tmp_path: Path) -> None:
    with GameStore(tmp_path) as store:
        store.accept(_pair("W:SPY", "B:5*G"))
        store.declare_end(EndingKind.RESIGNATION, Side.BLACK)
        game = store.current
        items = game_items(game)
    assert [_kind(i) for i in items] == ["new_game", "challenge", "game_over", "record"]
    bodies: list[Any] = [i.body for i in items]
    assert bodies[2]["ending"] == {"kind": "resignation", "winner": "B",
                                   "at": game.ending.at if game.ending else None}
    assert bodies[3]["record"] == game.full_record()
    assert bodies[1]["eliminated"] == {"W": 0, "B": 1}


def test_event_and_status_payloads_carry_format_and_table() -> None:
    status = {"state": "idle", "seq": 4}
    assert status_payload(status, table="7") == {"state": "idle", "seq": 4, "format": 1,
                                                 "table": "7", "software": __version__}
    assert wire.topic("demo", "7", wire.Topic.EVENTS) == "gg/demo/table/7/events"


def test_outbox_numbers_events_after_the_cursor_and_again_the_same(tmp_path: Path) -> None:
    with GameStore(tmp_path) as store:
        store.accept(_pair("W:SPY", "B:5*G"))
        outbox = Outbox(tmp_path)
        first = outbox.pending(Cursor(), 100)
        assert [p.seq for p in first] == [1, 2]
        # Acknowledged up to the first event: the rest keeps its number.
        again = Outbox(tmp_path).pending(first[0].after, 100)
        assert [(p.seq, _kind(p.item)) for p in again] == [(2, "challenge")]
        store.accept(_pair("W:PVT", "B:FLG"))  # the Flag falls
        store.new_game()
        later = outbox.pending(first[1].after, 100)
    assert [(p.seq, p.item.game, _kind(p.item)) for p in later] == [
        (3, 1, "challenge"), (4, 1, "game_over"), (None, 1, "record"), (5, 2, "new_game"),
    ]
    assert later[-1].after == Cursor(2, 1, 5)
    assert len(outbox.pending(first[1].after, 2)) == 2


def test_outbox_holds_an_abandoned_game_until_the_next_game_begins(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Issue 27 item 9: an abandoned game's events go out (no rank), its record does not;
    the walk waits there, so the record, when the next game begins, goes out before the
    next game's events and the sequence numbers never move."""
    with GameStore(tmp_path) as store:
        store.accept(_pair("W:SPY", "B:5*G"))
        store.new_game()  # game 1 abandoned, sealed
        outbox = Outbox(tmp_path)
        with caplog.at_level(logging.INFO, logger="arbiter.fleet.outbox"):
            held = outbox.pending(Cursor(), 100)
        assert [(p.seq, p.item.game, _kind(p.item)) for p in held] == [
            (1, 1, "new_game"), (2, 1, "challenge"), (3, 1, "game_over")]
        over: Any = held[-1].item.body
        assert over["ending"]["kind"] == "abandoned"
        assert rank_leaks(json.dumps([p.item.body for p in held])) == []
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING]  # the rule
        store.accept(_pair("B:COL", "W:MAJ"))  # game 2 begins: game 1 revealed
        later = outbox.pending(held[-1].after, 100)
    assert [(p.seq, p.item.game, _kind(p.item)) for p in later] == [
        (None, 1, "record"), (4, 2, "new_game"), (5, 2, "challenge")]
    record: Any = cast(RecordBody, later[0].item.body)["record"]
    assert record["challenges"][0]["defender"] == "B:5*G"


def test_cursor_file_round_trip_and_damage(tmp_path: Path) -> None:
    cursor_file = CursorFile(tmp_path)
    assert cursor_file.load() == Cursor()
    cursor_file.save(Cursor(3, 4, 17))
    assert cursor_file.load() == Cursor(3, 4, 17)
    cursor_file.path.write_text("{not json")
    with pytest.raises(CursorError, match="damaged"):
        cursor_file.load()


#: A pairing's id as the hub makes it (128 random bits in hex).
PAIRING = "0123456789abcdef0123456789abcdef"


def test_assignment_payloads() -> None:
    body = b'{"format":1,"round":3,"board":5,"white":"Ana","black":"Ben"}'
    assignment = Assignment.from_payload(body)
    assert assignment == Assignment(3, 5, "Ana", "Ben")
    with_id = Assignment.from_payload(body[:-1] + f',"pairing":"{PAIRING}"}}'.encode())
    assert with_id == Assignment(3, 5, "Ana", "Ben", PAIRING)
    assert Assignment.from_dict(with_id.to_dict()) == with_id  # kept across a reboot
    assert assignment.text == "Round 3 · Ana (White) vs Ben (Black)"
    assert Assignment.from_payload(b"") is None
    for bad in (b"[1]", b"{", b'{"format":2,"round":1,"board":1,"white":"a","black":"b"}',
                b'{"format":1,"round":"3","board":5,"white":"Ana","black":"Ben"}',
                b'{"format":1,"round":3,"board":5,"white":"","black":"Ben"}'):
        with pytest.raises(AssignmentMessageError):
            Assignment.from_payload(bad)


def test_assignment_file_keeps_and_clears(tmp_path: Path) -> None:
    f = AssignmentFile(tmp_path)
    assert f.load() is None
    f.save(Assignment(1, 2, "Ana", "Ben"))
    assert AssignmentFile(tmp_path).load() == Assignment(1, 2, "Ana", "Ben")
    f.save(None)
    assert f.load() is None and not f.path.exists()


def test_broker_urls() -> None:
    a = BrokerAddress.parse("mqtt://table-7:s3cret@venue.local")
    assert (a.host, a.port, a.tls, a.username, a.password) == (
        "venue.local", 1883, False, "table-7", "s3cret")
    assert "s3cret" not in str(a) and "s3cret" not in repr(a)
    assert BrokerAddress.parse("mqtts://h:9000").port == 9000
    assert BrokerAddress.parse("mqtts://h").port == 8883
    for bad in ("http://h", "mqtt://", "mqtt://h:99999", "mqtt://h/path"):
        with pytest.raises(BrokerAddressError):
            BrokerAddress.parse(bad)
        with pytest.raises(SettingsError, match="broker"):
            TournamentSettings.build(bad, "demo", "7")
    assert BrokerAddress.parse("venue.local:1884").url == "venue.local:1884"
    assert (BrokerAddress.parse("venue.local:1884").port, BrokerAddress.parse("h").tls) == (
        1884, False)


def test_tournament_settings_names_and_overrides(tmp_path: Path) -> None:
    assert not TournamentSettings.build("", "", "").configured
    with pytest.raises(SettingsError, match="table"):
        TournamentSettings.build("mqtt://h", "demo", "a/b")
    with pytest.raises(SettingsError, match="event"):
        TournamentSettings.build("mqtt://h", "#", "7")
    secret = tmp_path / "pw"
    secret.write_text("from-file\n")
    s = TournamentSettings.build("mqtt://u:url@h", "demo", "7", password_file=str(secret))
    assert s.password() == "from-file"
    moved = s.override(table="8")
    assert (moved.table, moved.event, moved.password()) == ("8", "demo", "from-file")
    assert TournamentSettings.build("mqtt://u:url@h", "demo", "7").password() == "url"


def test_payloads_of_a_real_game_pass_the_hubs_validation(tmp_path: Path) -> None:
    """What a table sends is what the hub accepts: the one wire format, both ends."""
    assignment = Assignment(3, 5, "Ana", "Ben", PAIRING)
    with GameStore(tmp_path) as store:
        store.new_game(assignment=assignment.to_dict())
        for attacker, defender in GAME:
            store.accept(_pair(attacker, defender))
        game = store.current
        facts = StatusFacts(game=game, state=DeviceState.GAME_OVER, message="", last_verdict=None,
                            readings={r: SlotReading(r, SlotState.EMPTY) for r in Role},
                            enrolling=False)
        fleet = FleetState(assignment=assignment)
        status = build_status(facts, mode="sim", seq=4, fleet=fleet)
    items = game_items(game)
    assert [_kind(i) for i in items][-2:] == ["game_over", "record"]
    # The journal kept the pairing's id, and the NEW GAME carries it to the hub.
    assert items[0].body == wire.new_game(wire.assignment(3, 5, "Ana", "Ben", PAIRING),
                                          game.started_at)
    for seq, item in enumerate(items, 1):
        if item.is_event:
            raw = encode(event_payload(item, table="7", seq=seq))
            assert wire.parse(wire.Topic.EVENTS, raw, table="7") == json.loads(raw)
        else:
            raw = encode(record_payload(item, table="7"))
            assert wire.parse(wire.Topic.RECORD, raw, table="7",
                              game=str(game.id)) == json.loads(raw)
    raw = encode(status_payload(status, table="7", event_seq=len(items) - 1))
    assert wire.parse(wire.Topic.STATUS, raw, table="7") == json.loads(raw)
