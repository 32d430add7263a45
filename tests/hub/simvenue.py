"""A venue of real processes for the hub's end-to-end tests: ``gg-arbiter`` nodes (hub or
``run --sim`` table) that can be killed and started again on their web port, a sim table
played through its simulator API, and the hub ledger's events read beside the hub."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

from arbiter.fleet.outbox import Cursor, Outbox
from arbiter.fleet.payloads import event_payload
from arbiter.hub.ledger import canonical
from arbiter.storage.journal import list_game_ids, read_game
from tests.support.mqtt import port_open
from tests.support.spawn import Session
from tests.support.waiting import WAIT, wait_until
from tests.support.web import PIN, http_json, play

ORGANISER = {"X-Admin-PIN": PIN}


class Node:
    """``gg-arbiter ARGS`` serving on a fixed web port, so it can come back on it."""

    def __init__(self, args: list[str], port: int, ready: str) -> None:
        self.args, self.port, self.ready = args, port, ready
        self.session: Session | None = None
        self.web = type("Web", (), {"port": port})()

    def start(self) -> Node:
        self.session = Session(self.args)
        self.session.expect(self.ready)
        return self

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
        status, answer = http_json(self.web, method, path, body, ORGANISER if pin else None)
        assert status < 300, (method, path, status, answer)
        return answer


class Table:
    """A sim table and its one game, played through the simulator API."""

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


def held(ledger: Path, table: str) -> list[str]:
    """The hub ledger's events of ``table`` in seq order, read beside the running hub."""
    if not ledger.exists():
        return []
    db = sqlite3.connect(f"file:{ledger}?mode=ro", uri=True, timeout=30)
    try:
        rows = db.execute("SELECT payload FROM events WHERE table_name=? ORDER BY seq",
                          (table,)).fetchall()
    except sqlite3.OperationalError:  # the hub has not made its schema yet
        return []
    finally:
        db.close()
    return [canonical(json.loads(p)) for (p,) in rows]
