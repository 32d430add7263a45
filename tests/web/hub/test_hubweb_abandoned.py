"""An abandoned game is revealed only once the next game has begun (issue 27 item 9), end
to end: a real table (keys on mock pins, its broker link) on a real Mosquitto, the hub's
real ingest and pages. Before the next game's first challenge no rank is in any MQTT
message (retained ones included), hub page, hub JSON, or table page, and that holds across
a restart of the table; after it, the game is revealed as a finished one is. The hub scores
the abandoned game for no one unless the organiser says otherwise; and it keeps the record
of an abandoned game from a table of an older version (published at once) off its pages
until that table has begun its next game."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arbiter.app.assembly import build_arbiter
from arbiter.app.config import load_config
from arbiter.app.service import start_link
from arbiter.fleet.link import FleetLink
from arbiter.tournament.model import Result
from tests.support.contract import AT, challenge
from tests.support.hub_secrecy import RECORD, crawl
from tests.support.mqtt import Subscriber
from tests.support.rig import Rig, write_config
from tests.support.waiting import wait_until
from tests.support.web import rank_leaks
from tests.web.hub.conftest import EVENT, Hub
from web.table import create_app

pytestmark = pytest.mark.timeout(120)


class RealTable:
    """``gg-arbiter run`` as the tests have it: the device on mock pins and its link."""

    def __init__(self, tmp_path: Path, factory: Any, port: int) -> None:
        tournament = (f'\n[tournament]\nbroker = "mqtt://127.0.0.1:{port}"\nevent = "{EVENT}"'
                      '\ntable = "7"\nkeepalive = 5\n')
        config = load_config(write_config(tmp_path, tournament), data_dir=tmp_path / "data")
        self.rig = Rig(build_arbiter(config, pin_factory=factory), factory).start()
        self.link: FleetLink | None = start_link(config, self.rig.arbiter, lambda _line: None)
        self.page = create_app(self.rig.arbiter, {"TESTING": True}).test_client()

    def play(self, attacker: str, defender: str) -> None:
        self.rig.challenge(attacker, defender)
        self.rig.empty()

    def close(self) -> None:
        if self.link is not None:
            self.link.close()
        self.rig.arbiter.close()


@pytest.fixture
def table_maker(tmp_path: Path, mock_factory: Any, broker_hub: Hub) -> Iterator[Any]:
    made: list[RealTable] = []

    def make() -> RealTable:
        assert broker_hub.broker is not None
        t = RealTable(tmp_path / "table", mock_factory, broker_hub.broker.port)
        made.append(t)
        return t

    (tmp_path / "table").mkdir()
    yield make
    for t in made:
        t.close()


def _table_pages_leak(table: RealTable, game: int) -> list[tuple[str, list[str]]]:
    out = []
    for path in ("/", "/api/status", "/api/games", "/games", f"/games/{game}",
                 f"/api/games/{game}"):
        response = table.page.get(path)
        assert response.status_code in (200, 403), (path, response.status_code)
        out.append((path, rank_leaks(response.get_data(as_text=True))))
    return [(p, found) for p, found in out if found]


#: Game 1 ended with no challenge (NEW GAME for the assignment): its record, whole armies,
#: tells nothing and is published at once.
EMPTY_GAME = 1


def _empty_game_record(message: Any) -> bool:
    return bool(message.topic.endswith("/table/7/record")
                and json.loads(message.payload).get("game") == EMPTY_GAME)


def _leaks(messages: list[Any]) -> list[tuple[str, list[str]]]:
    return [(m.topic, found) for m in messages if not _empty_game_record(m)
            and (found := rank_leaks(m.payload.decode()))]


def _mqtt_leaks(port: int) -> list[tuple[str, list[str]]]:
    """Rank tokens in what a fresh subscriber gets (every retained message)."""
    late = Subscriber(port)
    try:
        late.wait(lambda s: s.on("/table/7/status"), what="the table's retained status")
        return _leaks(late.messages)
    finally:
        late.close()


def _board_result(hub: Hub) -> Result | None:
    return hub.ledger.admin.pairings(1)[0].result


def test_abandoned_game_hidden_everywhere_until_the_next_game_begins(
    broker_hub: Hub, table_maker: Any
) -> None:
    hub = broker_hub
    assert hub.broker is not None and hub.ingest is not None
    watcher = Subscriber(hub.broker.port)  # every message on the wire, from the start
    for name in ("Ana", "Ben"):
        hub.ledger.admin.add_player(name)
    hub.ledger.admin.pair_round("round-robin")
    hub.ingest.publish_assignment("7", hub.ledger.admin.assign_table(1, 1, "7", "test"))
    table = table_maker()
    arbiter = table.rig.arbiter
    wait_until(lambda: arbiter.status()["new_game_needed"], what="the table's assignment")
    assert arbiter.new_game() == 2  # game 1 empty: nothing to confirm
    table.play("W:SPY", "B:5*G")
    table.play("B:PVT", "W:SPY")

    # NEW GAME over game 2 wants its confirmation; then game 2 is abandoned, sealed.
    assert table.page.post("/api/games").status_code in (401, 403)  # the PIN, as ever
    assert arbiter.new_game(abandon=2) == 3
    wait_until(lambda: any(g.game == "2" and g.ending == "abandoned"
                           for g in hub.ledger.events.games("7")),
               what="the hub hears game 2 abandoned")
    assert hub.ledger.tables.record("7", "2") is None
    games = [("7", "2"), ("7", "3")]  # game 1: EMPTY_GAME
    assert crawl(hub.server, games, "abandoned, next game not begun") > 10
    assert _table_pages_leak(table, 2) == []
    assert _mqtt_leaks(hub.broker.port) == []
    assert _board_result(hub) is None  # abandoned: no result

    # The table restarts in between: still sealed, on the table, the wire and the hub.
    table.close()
    table = table_maker()
    wait_until(lambda: table.rig.arbiter.status()["broker"]["state"] == "connected",
               what="the restarted table connected")
    assert table.rig.arbiter.sealed_games == (2,)
    assert table.page.get("/api/games/2").status_code == 403
    assert _table_pages_leak(table, 2) == []
    assert _mqtt_leaks(hub.broker.port) == []
    crawl(hub.server, games, "after the table's restart")
    assert _leaks(watcher.messages) == []  # nor anything sent since the start

    # Game 3's first challenge: game 2 is revealed as a finished game is.
    table.play("W:COL", "B:MAJ")
    wait_until(lambda: hub.ledger.tables.record("7", "2") is not None,
               what="the hub holds game 2's record")
    wait_until(lambda: hub.app.test_client().get("/api/games/7/2").json["reveal"] is not None,
               what="the hub reveals game 2")
    revealed = hub.app.test_client().get("/api/games/7/2").get_data(as_text=True)
    assert "5*G" in revealed or "General of the Army" in revealed
    record = table.page.get("/api/games/2")
    assert record.status_code == 200 and record.json["challenges"][0]["defender"] == "B:5*G"
    late = Subscriber(hub.broker.port)  # the record is retained, as a finished game's
    late.wait(lambda s: s.records(2), what="game 2's retained record")
    assert late.records(2)[-1].retain
    late.close()
    # The record went out before game 3's events: the sequence numbers run on unbroken.
    seqs = sorted({e["seq"] for e in watcher.events()})
    assert seqs == list(range(1, len(seqs) + 1))
    # Unscored unless the organiser says otherwise.
    assert _board_result(hub) is None
    hub.ledger.admin.correct_result(1, 1, Result.WHITE_WIN, "organiser")
    assert _board_result(hub) is Result.WHITE_WIN
    watcher.close()


def test_hub_keeps_an_older_tables_abandoned_record_off_its_pages(hub: Hub) -> None:
    """A table of an older version publishes an abandoned game's record at once: the hub
    shows it only once that table has begun its next game."""
    events = hub.ledger.events
    events.record("5", {"format": 1, "table": "5", "seq": 1, "game": "1", "type": "new_game",
                        "at": AT, "assignment": None})
    events.record("5", challenge("5", 2, "1", 1, 0, 1))
    events.record("5", {"format": 1, "table": "5", "seq": 3, "game": "1", "type": "game_over",
                        "at": AT, "ending": {"kind": "abandoned", "winner": None, "at": AT}})
    abandoned = {**RECORD, "ending": {"kind": "abandoned", "winner": None, "at": AT}}
    hub.ledger.tables.set_record("5", "1", json.loads(json.dumps(abandoned)))
    client = hub.app.test_client()
    shown = client.get("/api/games/5/1").json
    assert shown["over"] and shown["sealed"] and shown["reveal"] is None
    page = client.get("/games/5/1").get_data(as_text=True)
    assert "revealed once the table has begun its next game" in page
    assert rank_leaks(page) == []
    crawl(hub.server, [("5", "1")], "older table's abandoned record held")
    events.record("5", {"format": 1, "table": "5", "seq": 4, "game": "2", "type": "new_game",
                        "at": AT, "assignment": None})
    assert client.get("/api/games/5/1").json["reveal"] is None  # a new game, not begun
    events.record("5", challenge("5", 5, "2", 1, 1, 0))
    shown = client.get("/api/games/5/1").json
    assert not shown["sealed"] and shown["reveal"] is not None
