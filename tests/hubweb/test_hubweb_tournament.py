"""A 4-player round robin end to end: a real Mosquitto, ``gg-arbiter hub`` serving, and two
``gg-arbiter run --sim`` tables played through their simulator API. The organiser acts
only through the hub's API; the results flow back by themselves; the standings come out
as the rules say. While each game is on, every public hub route and the event stream
carry no rank; once it is over, the hub shows its reveal."""

from __future__ import annotations

import functools
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.support.hub_secrecy import crawl, leaks
from tests.support.mqtt import MOSQUITTO, Mosquitto
from tests.support.spawn import Session, free_port, gg_arbiter
from tests.support.waiting import WAIT, wait_until
from tests.support.web import FAST_CONFIG, PIN, SseClient, http_get, http_json, play

pytestmark = pytest.mark.timeout(240)

EVENT = "rr"
ORGANISER = {"X-Admin-PIN": PIN}
#: Who wins each game: the stronger by this order, except Ben and Cy, who draw.
STRENGTH = ["Ana", "Ben", "Cy", "Di"]
DRAWN = {"Ben", "Cy"}


class Node:
    """A child process with a web port: the hub or a table."""

    def __init__(self, session: Session, port: int) -> None:
        self.session = session
        self.web = SimpleNamespace(port=port)

    def call(self, method: str, path: str, body: Any = None, pin: bool = False) -> Any:
        status, answer = http_json(self.web, method, path, body,  # type: ignore[arg-type]
                                   ORGANISER if pin else None)
        assert status < 300, (method, path, status, answer)
        return answer

    def stop(self) -> None:
        self.session.proc.terminate()
        try:
            self.session.proc.wait(WAIT)
        except subprocess.TimeoutExpired:
            self.session.proc.kill()
            self.session.proc.wait(WAIT)


@pytest.fixture
def venue(tmp_path: Path) -> Iterator[tuple[Node, dict[str, Node]]]:
    if not shutil.which(MOSQUITTO):
        pytest.skip("mosquitto is not installed (bash setup.sh --dev installs it)")
    broker = Mosquitto(tmp_path / "broker").start()
    nodes: list[Node] = []
    try:
        hub_data = tmp_path / "hub"
        subprocess.run([*gg_arbiter(), "hub", "--event", EVENT, "--data", str(hub_data),
                        "set-pin", PIN], check=True, capture_output=True, timeout=60)
        port = free_port()
        hub = Node(Session(["hub", "--event", EVENT, "--data", str(hub_data), "--broker",
                            broker.url, "--host", "127.0.0.1", "--port", str(port)]), port)
        nodes.append(hub)
        config = tmp_path / "table.toml"
        config.write_text(FAST_CONFIG + f'\n[web]\nadmin_pin = "{PIN}"\n')
        tables: dict[str, Node] = {}
        for name in ("1", "2"):
            port = free_port()
            tables[name] = Node(Session(
                ["run", "--sim", "--config", str(config), "--data", str(tmp_path / f"t{name}"),
                 "--host", "127.0.0.1", "--port", str(port), "--broker", broker.url,
                 "--event", EVENT, "--table", name]), port)
            nodes.append(tables[name])
        hub.session.expect("hub web on")
        for table in tables.values():
            table.session.expect("gg-arbiter ready")
        yield hub, tables
    finally:
        for node in nodes:
            node.stop()
        broker.stop()


def _winner(white: str, black: str) -> str | None:
    if {white, black} == DRAWN:
        return None
    return "W" if STRENGTH.index(white) < STRENGTH.index(black) else "B"


class Game:
    """One game of a round at its table, played through the table's simulator API."""

    def __init__(self, table_name: str, table: Node, board: dict[str, Any]) -> None:
        self.name, self.table, self.board = table_name, table, board
        self.id = 0

    def status(self) -> dict[str, Any]:
        return dict(self.table.call("GET", "/api/status"))

    def put(self, slot: str, piece: str) -> None:
        self.table.call("PUT", f"/api/sim/slots/{slot}", {"piece": piece})

    def clear(self, slot: str) -> None:
        self.table.call("DELETE", f"/api/sim/slots/{slot}")

    def start(self) -> None:
        """Wait for the hub's assignment, start a new game (it carries it), one challenge."""
        def assigned() -> bool:
            a = self.status().get("assignment") or {}
            return (a.get("round"), a.get("board")) == (self.board["round"], self.board["board"])

        wait_until(assigned, what=f"table {self.name} has its assignment")
        self.id = int(self.table.call("POST", "/api/games", {}, pin=True)["game_id"])
        wait_until(lambda: self.status()["state"] == "idle", what="the new game ready")
        play(self.put, self.clear, self.status, "W:SPY", "B:5*G")  # spy takes general

    def finish(self) -> None:
        winner = _winner(self.board["white"], self.board["black"])
        if winner == "W":
            play(self.put, self.clear, self.status, "W:PVT", "B:FLG")
        elif winner == "B":
            play(self.put, self.clear, self.status, "B:PVT", "W:FLG")
        else:
            self.table.call("POST", f"/api/games/{self.id}/end", {"reason": "draw"}, pin=True)


def _reveal(hub: Node, path: str) -> Any:
    return hub.call("GET", path)["reveal"]


def _hub_has(hub: Node, games: list[Game]) -> bool:
    rows = {r["table"]: r for r in hub.call("GET", "/api/venue")["tables"]}
    return all(g.name in rows and rows[g.name]["game"] == str(g.id)
               and rows[g.name]["challenges"] == 1 for g in games)


def test_round_robin_of_four_on_two_tables_gives_the_standings(
    venue: tuple[Node, dict[str, Node]],
) -> None:
    hub, tables = venue
    sse = SseClient(hub.web.port)
    try:
        roster = "name,rating\n" + "".join(f"{n},{2000 - 100 * i}\n"
                                           for i, n in enumerate(STRENGTH))
        hub.call("POST", "/api/organiser/players/import", {"csv": roster}, pin=True)
        played: list[tuple[str, int]] = []
        for number in (1, 2, 3):
            hub.call("POST", "/api/organiser/rounds", {"system": "round-robin"}, pin=True)
            (rnd,) = [r for r in hub.call("GET", "/api/rounds") if r["round"] == number]
            assert len(rnd["boards"]) == 2
            for b in rnd["boards"]:
                hub.call("POST", "/api/organiser/assign",
                         {"round": number, "board": b["board"], "table": str(b["board"])},
                         pin=True)
            games = [Game(str(b["board"]), tables[str(b["board"])], {"round": number, **b})
                     for b in rnd["boards"]]
            for g in games:
                g.start()
            # Both games of the round are on: no rank anywhere on the hub.
            wait_until(functools.partial(_hub_has, hub, games), what="the hub has both")
            crawl(hub.web, [(g.name, str(g.id)) for g in games], f"round {number} on")
            assert not leaks(sse.text()), leaks(sse.text())
            for g in games:
                g.finish()
                played.append((g.name, g.id))

            def round_done(number: int = number) -> bool:
                (r,) = [r for r in hub.call("GET", "/api/rounds") if r["round"] == number]
                return all(b["result"] for b in r["boards"])

            wait_until(round_done, timeout=3 * WAIT, what=f"round {number}'s results")

        standings = hub.call("GET", "/api/standings")["rows"]
        # Ana beats all (3); Ben and Cy beat Di and draw together (1.5 each); Di 0.
        # Ben and Cy stay equal on every tie-break (their game a draw; Buchholz 4.5 each;
        # Sonneborn-Berger 0 + 1.5/2 each), so they share second place.
        assert [(s["rank"], s["name"], s["score"]) for s in standings] == [
            (1, "Ana", 3.0), (2, "Ben", 1.5), (2, "Cy", 1.5), (4, "Di", 0.0)]
        assert [s["tiebreaks"][1] for s in standings] == [3.0, 4.5, 4.5, 6.0]
        # Every game is over now: the reveals show the pieces.
        for name, game in played:
            wait_until(functools.partial(_reveal, hub, f"/api/games/{name}/{game}"),
                       what=f"the reveal of table {name} game {game}")
        first = f"/games/{played[0][0]}/{played[0][1]}"
        _s, _h, page = http_get(hub.web, first)  # type: ignore[arg-type]
        assert "General" in page and "Spy" in page
        assert not leaks(sse.text())  # the stream never carries a rank
    finally:
        sse.close()
