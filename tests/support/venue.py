"""A venue in processes for end-to-end tests: a real Mosquitto, ``gg-arbiter hub`` serving,
and ``gg-arbiter run --sim`` tables on it, each game played through a table's simulator API
as the players at the board would.

:class:`Node` is a ``gg-arbiter`` process on a fixed web port (it can be killed with -9 and
started again on it); :class:`SimTable` a sim table with its data directory (what its
journals say the hub must hold); :class:`BoardGame` one assigned board's game at its table;
:func:`held` the hub ledger's events read beside the running hub; :func:`venue` starts a
broker, a hub and tables.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from arbiter.app.cli import main
from arbiter.fleet.outbox import Cursor, Outbox
from arbiter.fleet.payloads import event_payload
from arbiter.storage.journal import list_game_ids, read_game
from arbiter.wire import canonical
from tests.support.mqtt import Mosquitto, port_open
from tests.support.spawn import Session, free_port, gg_arbiter
from tests.support.tools import require_tool
from tests.support.waiting import WAIT, wait_until
from tests.support.web import FAST_CONFIG, PIN, http_json, play

#: The header that carries the organiser's (and the tables' admin) PIN on API calls.
ORGANISER = {"X-Admin-PIN": PIN}


class Node:
    """``gg-arbiter ARGS`` serving on a fixed web port, so it can come back on it."""

    def __init__(self, args: list[str], port: int, ready: str) -> None:
        self.args, self.port, self.ready = args, port, ready
        self.session: Session | None = None
        self.web = type("Web", (), {"port": port})()

    def launch(self) -> Node:
        """Start the process; :meth:`wait_ready` waits for its ready line."""
        self.session = Session(self.args)
        return self

    def wait_ready(self) -> Node:
        assert self.session is not None
        self.session.expect(self.ready)
        return self

    def start(self) -> Node:
        return self.launch().wait_ready()

    def kill9(self) -> None:
        assert self.session is not None
        self.session.proc.send_signal(signal.SIGKILL)
        self.session.proc.wait(WAIT)
        wait_until(lambda: not port_open(self.port), what="the web port closed")

    def stop(self) -> None:
        if self.session is None or self.session.proc.poll() is not None:
            return
        self.session.proc.terminate()
        try:
            self.session.proc.wait(WAIT)
        except subprocess.TimeoutExpired:
            self.session.kill()

    def call(self, method: str, path: str, body: Any = None, pin: bool = False) -> Any:
        """One JSON request (with the PIN if ``pin``); fails the test on a status >= 300."""
        status, answer = http_json(self.web, method, path, body, ORGANISER if pin else None)
        assert status < 300, (method, path, status, answer)
        return answer


class SimTable:
    """A ``run --sim`` table with its data directory, played through the simulator API."""

    def __init__(self, name: str, node: Node, data: Path) -> None:
        self.name, self.node, self.data = name, node, data
        self.game = 0

    def status(self) -> dict[str, Any]:
        return dict(self.node.call("GET", "/api/status"))

    def put(self, slot: str, piece: str) -> None:
        self.node.call("PUT", f"/api/sim/slots/{slot}", {"piece": piece})

    def clear(self, slot: str) -> None:
        self.node.call("DELETE", f"/api/sim/slots/{slot}")

    def new_game(self) -> None:
        self.game = int(self.node.call("POST", "/api/games", {}, pin=True)["game_id"])
        wait_until(lambda: self.status()["state"] == "idle", what=f"table {self.name} ready")

    def challenge(self, attacker: str, defender: str) -> None:
        before = self.status()["challenge_count"]
        play(self.put, self.clear, self.status, attacker, defender)
        assert self.status()["challenge_count"] == before + 1, f"table {self.name}"

    def over(self) -> bool:
        return read_game(self.data, self.game).ending is not None

    def expected(self) -> list[str]:
        """The events its journals give, as the hub must hold them (canonical JSON)."""
        pending = Outbox(self.data).pending(Cursor(), 1_000_000)
        return [canonical(event_payload(p.item, table=self.name, seq=p.seq))
                for p in pending if p.seq is not None]

    def endings(self) -> dict[str, tuple[str, str | None]]:
        out: dict[str, tuple[str, str | None]] = {}
        for gid in list_game_ids(self.data):
            ending = read_game(self.data, gid).ending
            assert ending is not None, f"table {self.name} game {gid} is not over"
            d = ending.to_dict()
            out[str(gid)] = (d["kind"], d["winner"])
        return out


def hub_node(hub_data: Path, event: str, broker_url: str, *extra: str) -> Node:
    """``gg-arbiter hub`` serving ``event`` from ``hub_data`` on a free port (not started)."""
    port = free_port()
    return Node(["hub", "--event", event, "--data", str(hub_data), "--broker", broker_url,
                 "--host", "127.0.0.1", "--port", str(port), *extra], port, "hub web on")


def sim_table(tmp_path: Path, name: str, event: str, broker_url: str) -> SimTable:
    """``gg-arbiter run --sim`` as table ``name`` of ``event`` (admin PIN :data:`PIN`),
    its data in ``tmp_path/t<name>``, on a free port (not started)."""
    config = tmp_path / "table.toml"
    if not config.exists():
        config.write_text(FAST_CONFIG + f'\n[web]\nadmin_pin = "{PIN}"\n')
    port, data = free_port(), tmp_path / f"t{name}"
    node = Node(["run", "--sim", "--config", str(config), "--data", str(data),
                 "--host", "127.0.0.1", "--port", str(port), "--broker", broker_url,
                 "--event", event, "--table", name], port, "gg-arbiter ready")
    return SimTable(name, node, data)


@contextmanager
def venue(
    tmp_path: Path, event: str, table_names: Sequence[str]
) -> Iterator[tuple[Node, dict[str, SimTable]]]:
    """A broker, a hub (organiser PIN :data:`PIN`) and one sim table per name, all ready."""
    require_tool("mosquitto")
    broker = Mosquitto(tmp_path / "broker").start()
    nodes: list[Node] = []
    try:
        hub_data = tmp_path / "hub"
        subprocess.run([*gg_arbiter(), "hub", "--event", event, "--data", str(hub_data),
                        "set-pin", PIN], check=True, capture_output=True, timeout=60)
        hub = hub_node(hub_data, event, broker.url)
        nodes.append(hub.launch())
        tables = {name: sim_table(tmp_path, name, event, broker.url) for name in table_names}
        for table in tables.values():
            nodes.append(table.node.launch())
        for node in nodes:  # launched together, waited for together: a faster start
            node.wait_ready()
        yield hub, tables
    finally:
        for node in nodes:
            node.stop()
        broker.stop()


#: Starts a hub (its organiser PIN set) that asks for what it missed after so many seconds.
HubFactory = Callable[[float], Node]


@contextmanager
def late_hub_venue(
    tmp_path: Path, event: str
) -> Iterator[tuple[Mosquitto, SimTable, HubFactory, Path]]:
    """A persistent broker and table 1 of ``event`` playing, with no hub yet: the hub comes
    when the test calls the factory (the broker, the table, the factory, the ledger file)."""
    require_tool("mosquitto")
    broker = Mosquitto(tmp_path / "broker", persistent=True)
    broker.start()
    nodes: list[Node] = []
    hub_data = tmp_path / "hub"

    def make_hub(resend_after: float) -> Node:
        assert main(["hub", "--event", event, "--data", str(hub_data), "set-pin", PIN]) == 0
        node = hub_node(hub_data, event, broker.url, "--resend-after", str(resend_after))
        nodes.append(node)
        return node.start()

    try:
        table = sim_table(tmp_path, "1", event, broker.url)
        nodes.append(table.node.start())
        yield broker, table, make_hub, hub_data / "hub.sqlite"
    finally:
        for n in nodes:
            n.stop()
        broker.stop()


class BoardGame:
    """One board's game at its table: ``board`` as ``/api/rounds`` gives it, with its
    ``round``."""

    def __init__(self, table: SimTable, board: dict[str, Any]) -> None:
        self.table, self.board = table, board

    @property
    def name(self) -> str:
        return self.table.name

    @property
    def id(self) -> int:
        return self.table.game

    def start(self) -> None:
        """Wait for the hub's assignment, start a new game (it carries it), one challenge."""
        def assigned() -> bool:
            a = self.table.status().get("assignment") or {}
            return (a.get("round"), a.get("board")) == (self.board["round"], self.board["board"])

        wait_until(assigned, what=f"table {self.name} has its assignment")
        self.table.new_game()
        self.table.challenge("W:SPY", "B:5*G")  # spy takes general

    def finish(self, winner: str | None) -> None:
        """End the game: ``"W"`` or ``"B"`` captures the other's flag; None agrees a draw."""
        if winner == "W":
            self.table.challenge("W:PVT", "B:FLG")
        elif winner == "B":
            self.table.challenge("B:PVT", "W:FLG")
        else:
            self.table.node.call("POST", f"/api/games/{self.id}/end", {"reason": "draw"},
                                 pin=True)


def _read_ledger(ledger: Path, sql: str, table: str) -> list[tuple[object, ...]]:
    """Rows of ``sql`` for ``table`` read beside the running hub (none before its schema)."""
    if not ledger.exists():
        return []
    db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True, timeout=30)
    try:
        return list(db.execute(sql, (table,)).fetchall())
    except sqlite3.OperationalError:  # the hub has not made its schema yet
        return []
    finally:
        db.close()


def held(ledger: Path, table: str) -> list[str]:
    """The hub ledger's events of ``table`` in seq order."""
    rows = _read_ledger(ledger, "SELECT payload FROM events WHERE table_name=? ORDER BY seq",
                        table)
    return [canonical(json.loads(str(p))) for (p,) in rows]


def held_records(ledger: Path, table: str) -> list[str]:
    """The games of ``table`` whose record the hub ledger holds."""
    rows = _read_ledger(ledger, "SELECT game FROM records WHERE table_name=? ORDER BY game",
                        table)
    return [str(g) for (g,) in rows]
