"""Fixtures for the fleet tests: a real Mosquitto, a proxy before it, and a table."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from arbiter.app.assembly import build_arbiter
from arbiter.app.config import load_config
from arbiter.app.service import start_link
from arbiter.fleet.link import FleetLink
from tests.support.mqtt import Mosquitto, Proxy, Subscriber
from tests.support.rig import Rig, write_config
from tests.support.tools import require_tool
from tests.support.venue import Node
from tests.support.waiting import wait_until

#: A whole game: (attacker, defender) to a captured Flag, with splits and a spy.
GAME = [
    ("W:SPY", "B:5*G"),   # attacker survives
    ("B:PVT", "W:SPY"),   # attacker: the private takes the spy
    ("W:PVT", "B:PVT"),   # split
    ("B:2LT", "W:1*G"),   # defender
    ("W:1LT", "B:FLG"),   # the Flag falls: White wins
]


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    require_tool("mosquitto")
    mosquitto = Mosquitto(tmp_path / "broker").start()
    try:
        yield mosquitto
    finally:
        mosquitto.stop()


@pytest.fixture
def proxy(broker: Mosquitto) -> Iterator[Proxy]:
    p = Proxy(broker.port)
    try:
        yield p
    finally:
        p.close()


class Table:
    """A keys-gpio arbiter on mock pins with its broker link, as ``gg-arbiter run`` has it."""

    def __init__(self, rig: Rig, link: FleetLink | None) -> None:
        self.rig = rig
        self.link = link

    @property
    def arbiter(self) -> Any:
        return self.rig.arbiter

    def close(self) -> None:
        if self.link is not None:
            self.link.close()
        self.rig.arbiter.close()


TableFactory = Callable[..., Table]


@pytest.fixture
def make_table(tmp_path: Path, mock_factory: Any) -> Iterator[TableFactory]:
    """Build and start tables: ``make_table(broker_url, table="7", extra="")``."""
    made: list[Table] = []

    def make(url: str, table: str = "7", extra: str = "", data: str = "data") -> Table:
        tournament = f'\n[tournament]\nbroker = "{url}"\nevent = "demo"\ntable = "{table}"\n'
        tournament += "keepalive = 5\n" + extra
        config = load_config(write_config(tmp_path, tournament), data_dir=tmp_path / data)
        rig = Rig(build_arbiter(config, pin_factory=mock_factory), mock_factory).start()
        link = start_link(config, rig.arbiter, lambda _line: None)
        t = Table(rig, link)
        made.append(t)
        return t

    yield make
    for t in made:
        t.close()


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[tuple[Mosquitto, Path]]:
    """A Mosquitto run with ``gg-arbiter broker-config``'s files for tables 1 and 2 of
    event ``demo`` (the test's own listener; no persistence): (broker, the files' dir)."""
    from arbiter.app.cli import main

    require_tool("mosquitto")
    out = tmp_path / "venue"
    assert main(["broker-config", "--tables", "2", "--event", "demo", "--out", str(out)]) == 0
    conf = (out / "mosquitto.conf").read_text().splitlines()
    kept = [ln for ln in conf if not ln.startswith(("listener", "persistence", "autosave"))]
    broker = Mosquitto(tmp_path / "broker", extra="\n".join(kept)).start()
    try:
        yield broker, out
    finally:
        broker.stop()


def secret(out: Path, user: str) -> str:
    """The password ``broker-config`` wrote for ``user``."""
    return (out / "secrets" / f"{user}.password").read_text().strip()


def heard_online(table: Node, hub: Subscriber, who: str = "the table") -> None:
    """Wait until ``table`` says it is connected and ``hub`` hears table 1 online."""
    wait_until(lambda: table.call("GET", "/api/status")["broker"]["state"] == "connected",
               what=f"{who} logged in")
    hub.wait(lambda s: any(m.payload == b"true" for m in s.on("table/1/online")),
             what="the hub hears table 1 online")
