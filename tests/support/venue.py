"""A venue in processes: a real Mosquitto, ``gg-arbiter hub`` serving, and
``gg-arbiter run --sim`` tables on it, each game played through a table's
simulator API as the players at the board would.

``venue(tmp_path, event, tables)`` yields the hub and the tables as
:class:`Node` (a child process with its web port); :class:`BoardGame` plays
one assigned board's game at its table.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.support.mqtt import MOSQUITTO, Mosquitto
from tests.support.spawn import Session, free_port, gg_arbiter
from tests.support.waiting import WAIT, wait_until
from tests.support.web import FAST_CONFIG, PIN, http_json, play

#: The header that carries the organiser's (and the tables' admin) PIN on API calls.
ORGANISER = {"X-Admin-PIN": PIN}


class Node:
    """A child process with a web port: the hub or a table."""

    def __init__(self, session: Session, port: int) -> None:
        self.session = session
        self.web = SimpleNamespace(port=port)

    def call(self, method: str, path: str, body: Any = None, pin: bool = False) -> Any:
        """One JSON request; fails the test on a status of 300 or more."""
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


@contextmanager
def venue(
    tmp_path: Path, event: str, table_names: Sequence[str]
) -> Iterator[tuple[Node, dict[str, Node]]]:
    """A broker, a hub (organiser PIN :data:`PIN`) and one sim table per name, all ready."""
    if not shutil.which(MOSQUITTO):
        pytest.skip("mosquitto is not installed (bash setup.sh --dev installs it)")
    broker = Mosquitto(tmp_path / "broker").start()
    nodes: list[Node] = []
    try:
        hub_data = tmp_path / "hub"
        subprocess.run([*gg_arbiter(), "hub", "--event", event, "--data", str(hub_data),
                        "set-pin", PIN], check=True, capture_output=True, timeout=60)
        port = free_port()
        hub = Node(Session(["hub", "--event", event, "--data", str(hub_data), "--broker",
                            broker.url, "--host", "127.0.0.1", "--port", str(port)]), port)
        nodes.append(hub)
        config = tmp_path / "table.toml"
        config.write_text(FAST_CONFIG + f'\n[web]\nadmin_pin = "{PIN}"\n')
        tables: dict[str, Node] = {}
        for name in table_names:
            port = free_port()
            tables[name] = Node(Session(
                ["run", "--sim", "--config", str(config), "--data", str(tmp_path / f"t{name}"),
                 "--host", "127.0.0.1", "--port", str(port), "--broker", broker.url,
                 "--event", event, "--table", name]), port)
            nodes.append(tables[name])
        hub.session.expect("hub web on")
        for table in tables.values():
            table.session.expect("gg-arbiter ready")
        yield hub, tables
    finally:
        for node in nodes:
            node.stop()
        broker.stop()


class BoardGame:
    """One board's game at its table, played through the table's simulator API.

    ``board`` is the board as ``/api/rounds`` gives it, with its ``round``.
    """

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

    def finish(self, winner: str | None) -> None:
        """End the game: ``"W"`` or ``"B"`` captures the other's flag; None agrees a draw."""
        if winner == "W":
            play(self.put, self.clear, self.status, "W:PVT", "B:FLG")
        elif winner == "B":
            play(self.put, self.clear, self.status, "B:PVT", "W:FLG")
        else:
            self.table.call("POST", f"/api/games/{self.id}/end", {"reason": "draw"}, pin=True)
