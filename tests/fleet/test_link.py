"""A table on a real Mosquitto: the whole game on the wire, a broker killed mid-game,
a broker that refuses, is away or stalls, and the hub's assignment."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from arbiter.fleet.outbox import CursorFile
from arbiter.rules.pieces import Piece
from arbiter.rules.verdict import Role, resolve
from arbiter.storage.journal import read_game
from tests.fleet.conftest import GAME, TableFactory
from tests.support.mqtt import Mosquitto, Proxy, Subscriber, seqs
from tests.support.spawn import free_port
from tests.support.tools import require_tool
from tests.support.waiting import wait_until
from tests.support.web import rank_leaks

pytestmark = pytest.mark.timeout(120)


def expected_result(attacker: str, defender: str) -> str:
    """The public word of the verdict, from the rules."""
    verdict = resolve(Piece.parse(attacker).rank, Piece.parse(defender).rank)
    return verdict.survivor.public_word


def expected_eliminated(pairs: list[tuple[str, str]]) -> list[dict[str, int]]:
    """The running count of fallen pieces per side after each challenge, from the rules."""
    counts = {"W": 0, "B": 0}
    out = []
    for attacker, defender in pairs:
        pieces = {Role.ATTACKER: Piece.parse(attacker), Role.DEFENDER: Piece.parse(defender)}
        for role in resolve(pieces[Role.ATTACKER].rank, pieces[Role.DEFENDER].rank).eliminated:
            counts[pieces[role].side.letter] += 1
        out.append(dict(counts))
    return out


def play(table: Any, pairs: list[tuple[str, str]]) -> None:
    for attacker, defender in pairs:
        table.rig.challenge(attacker, defender)
        table.rig.empty()


def no_duplicates_differ(events: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """Events by seq; an event received twice must be the same event."""
    by_seq: dict[int, dict[str, Any]] = {}
    for e in events:
        assert by_seq.setdefault(e["seq"], e) == e, f"seq {e['seq']} sent as two events"
    return by_seq


def test_whole_game_is_published_in_order_with_no_rank_until_the_record(
    broker: Mosquitto, make_table: TableFactory, tmp_path: Path
) -> None:
    sub = Subscriber(broker.port)
    table = make_table(broker.url)
    sub.wait(lambda s: s.on("/online") and s.on("/online")[-1].payload == b"true",
             what="online true")
    play(table, GAME[:-1])
    sub.wait(lambda s: len(s.events()) == len(GAME), what="new game + 4 challenges")
    leaks = [(m.topic, rank_leaks(m.payload.decode())) for m in sub.messages]
    assert [leak for leak in leaks if leak[1]] == [], "a rank on the wire during the game"
    assert not sub.records(1)

    play(table, GAME[-1:])
    sub.wait(lambda s: s.records(1), what="the record once the game is over")
    events = sub.events()
    assert seqs(events) == list(range(1, len(GAME) + 3))
    assert [e["type"] for e in events] == ["new_game", *["challenge"] * len(GAME), "game_over"]
    assert all(e["format"] == 1 and e["table"] == "7" and e["game"] == 1 for e in events)
    challenges = events[1:-1]
    assert [c["result"] for c in challenges] == [expected_result(a, d) for a, d in GAME]
    assert [c["attacker_side"] for c in challenges] == [a[0] for a, _ in GAME]
    assert [c["number"] for c in challenges] == list(range(1, len(GAME) + 1))
    assert [c["eliminated"] for c in challenges] == expected_eliminated(GAME)
    assert events[-1]["ending"]["kind"] == "flag_captured"
    assert events[-1]["ending"]["winner"] == "W"
    record = sub.records(1)[-1]  # retained: checked by a late subscriber below
    game = read_game(tmp_path / "data", 1)
    assert record.json() == {"format": 1, "table": "7", "game": 1, "record": game.full_record()}
    assert "5*G" in record.payload.decode()  # the reveal names the ranks

    late = Subscriber(broker.port)
    late.wait(lambda s: s.records(1) and s.on("/status") and s.on("/online"),
              what="retained record, status, online")
    assert all(late.on(t)[0].retain for t in ("/record", "/status", "/online"))
    assert not late.on("/events")  # events are not retained
    status = late.on("/status")[-1].json()
    assert status["table"] == "7" and status["format"] == 1 and status["game_id"] == 1
    assert status["broker"]["state"] == "connected"
    wait_until(lambda: CursorFile(tmp_path / "data").load().seq == len(GAME) + 2,
               what="the cursor over every acknowledged event")
    sub.close()
    late.close()


def _events_arrived(sub: Subscriber, count: int) -> bool:
    return set(seqs(sub.events())) == set(range(1, count + 1))


def test_broker_killed_mid_game_then_restarted_every_event_arrives(
    broker: Mosquitto, proxy: Proxy, make_table: TableFactory, tmp_path: Path
) -> None:
    sub = Subscriber(broker.port)
    table = make_table(f"mqtt://127.0.0.1:{proxy.port}")
    play(table, GAME[:2])
    sub.wait(lambda s: _events_arrived(s, 3), what="events 1-3")
    wait_until(lambda: CursorFile(tmp_path / "data").load().seq == 3)

    broker.kill()
    proxy.cut()
    play(table, GAME[2:4])  # the table keeps deciding with no broker
    assert table.arbiter.status()["challenge_count"] == 4
    wait_until(lambda: table.arbiter.status()["broker"]["state"] == "reconnecting")
    assert CursorFile(tmp_path / "data").load().seq == 3  # nothing acknowledged since

    proxy.mode = "refuse"  # the table waits until the subscriber is back
    broker.start()
    sub.wait(lambda s: s.subscribed.is_set(), what="subscriber back")
    proxy.mode = "forward"
    sub.wait(lambda s: _events_arrived(s, 5), what="events 4-5 after the restart")
    play(table, GAME[4:])
    sub.wait(lambda s: _events_arrived(s, len(GAME) + 2), what="every event")
    by_seq = no_duplicates_differ(sub.events())
    numbers = [by_seq[s].get("number") for s in sorted(by_seq) if by_seq[s]["type"] == "challenge"]
    assert numbers == list(range(1, len(GAME) + 1))
    wait_until(lambda: CursorFile(tmp_path / "data").load().seq == len(GAME) + 2)
    sub.close()


def _password_broker(tmp_path: Path) -> Mosquitto:
    passwd = tmp_path / "passwd"
    subprocess.run([require_tool("mosquitto_passwd"), "-b", "-c", str(passwd), "table-7", "right"],
                   check=True, capture_output=True)
    return Mosquitto(tmp_path / "locked",
                     extra=f"allow_anonymous false\npassword_file {passwd}\n").start()


@pytest.mark.parametrize("trouble", ["wrong password", "unreachable", "stalled"])
def test_a_broker_that_refuses_is_away_or_stalls_never_stops_the_verdicts(
    trouble: str, broker: Mosquitto, proxy: Proxy, make_table: TableFactory, tmp_path: Path
) -> None:
    locked = None
    if trouble == "wrong password":
        locked = _password_broker(tmp_path)
        url = f"mqtt://table-7:wrong@127.0.0.1:{locked.port}"
    elif trouble == "unreachable":
        url = f"mqtt://127.0.0.1:{free_port()}"
    else:
        proxy.mode = "stall"
        url = f"mqtt://127.0.0.1:{proxy.port}"
    try:
        table = make_table(url)
        play(table, GAME)
        status = table.arbiter.status()
        assert status["challenge_count"] == len(GAME) and status["state"] == "game_over"
        assert status["broker"]["state"] == "reconnecting"
        if trouble == "wrong password":
            wait_until(lambda: "refused" in table.arbiter.status()["broker"]["detail"])
            assert table.arbiter.status()["broker"]["cause"] == (
                "refused by the broker (not authorized)")
        assert CursorFile(tmp_path / "data").load().seq == 0
    finally:
        if locked is not None:
            locked.stop()


def test_the_hubs_assignment_is_shown_and_recorded_by_new_game(
    broker: Mosquitto, make_table: TableFactory, tmp_path: Path
) -> None:
    sub = Subscriber(broker.port)
    table = make_table(broker.url)
    wait_until(lambda: table.arbiter.status()["broker"]["state"] == "connected")
    hub = mqtt.Client(CallbackAPIVersion.VERSION2)
    hub.connect("127.0.0.1", broker.port)
    hub.loop_start()
    topic = "gg/demo/table/7/assignment"
    body = {"format": 1, "round": 3, "board": 5, "white": "Ana", "black": "Ben"}
    hub.publish(topic, json.dumps(body), qos=1, retain=True).wait_for_publish(5)
    wait_until(lambda: table.arbiter.status()["assignment"] is not None)
    assert table.arbiter.status()["assignment"]["text"] == "Round 3 · Ana (White) vs Ben (Black)"
    stored = json.loads((tmp_path / "data" / "assignment.json").read_text())
    assert stored == {"round": 3, "board": 5, "white": "Ana", "black": "Ben"}

    game_id = table.arbiter.new_game()
    assert read_game(tmp_path / "data", game_id).assignment == stored
    sub.wait(lambda s: any(e["game"] == game_id for e in s.events()))
    new_game = next(e for e in sub.events() if e["game"] == game_id)
    assert new_game["type"] == "new_game" and new_game["assignment"] == stored

    hub.publish(topic, b"not json", qos=1, retain=True).wait_for_publish(5)
    hub.publish(topic, b"", qos=1, retain=True).wait_for_publish(5)  # cleared
    wait_until(lambda: table.arbiter.status()["assignment"] is None)
    assert not (tmp_path / "data" / "assignment.json").exists()
    hub.loop_stop()
    hub.disconnect()
    sub.close()


def test_no_broker_configured_status_says_so(make_table: TableFactory) -> None:
    table = make_table("")
    assert table.link is None
    table.rig.challenge("W:SPY", "B:5*G")
    assert table.arbiter.status()["broker"] == {"state": "not configured", "detail": "",
                                                "cause": ""}
    assert table.arbiter.status()["assignment"] is None
