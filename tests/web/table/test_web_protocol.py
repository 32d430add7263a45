"""The web uses the device only through ``DeviceView``: shown on the source and on a fake.

The fake device below has nothing but the Protocol's members (no record, no
config, no hardware), yet the app serves the status, the games, the admin
commands and the simulator panel from it.
"""

from __future__ import annotations

import ast
import queue
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from arbiter.device.protocol import DeviceView
from arbiter.drivers.readers.base import SlotState
from arbiter.rules.game import EndingKind, Game
from arbiter.rules.pieces import Piece
from arbiter.rules.ranks import Side
from arbiter.rules.verdict import Role
from arbiter.storage.journal import GameStore
from web.table import create_app

WEB = Path(__file__).resolve().parents[3] / "web" / "table"
PIN = "246813"


def _protocol_members() -> set[str]:
    return {name for name in vars(DeviceView) if not name.startswith("_")}


def _device_reads(tree: ast.AST) -> list[tuple[int, str]]:
    """Attributes read on ``get_device()`` or on a name ``device``, and getattr on them."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            target = node.value
            on_device = (isinstance(target, ast.Name) and target.id == "device") or (
                isinstance(target, ast.Call)
                and isinstance(target.func, ast.Name)
                and target.func.id == "get_device"
            )
            if on_device:
                found.append((node.lineno, node.attr))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
        ):
            found.append((node.lineno, "getattr()"))
    return found


def test_web_reads_only_protocol_members_of_the_device() -> None:
    members = _protocol_members()
    assert {"status", "game", "new_game", "data_dir", "sim"} <= members
    reads = 0
    for path in sorted(WEB.glob("*.py")):
        for line, attr in _device_reads(ast.parse(path.read_text())):
            reads += 1
            assert attr in members, f"{path.name}:{line} uses device.{attr}"
    assert reads > 10  # the check did look at the views


def test_web_protocol_check_catches_a_reach_into_the_record() -> None:
    tree = ast.parse("def view():\n    return get_device().store.current.id\n")
    assert [attr for _, attr in _device_reads(tree)] == ["store"]
    assert "store" not in _protocol_members()


class FakeSlots:
    def __init__(self) -> None:
        self.seated: dict[Role, Piece] = {}

    def seat(self, role: Role, piece_text: str) -> Piece:
        piece = Piece.parse(piece_text)
        self.seated[role] = piece
        return piece

    def clear(self, role: Role) -> None:
        self.seated.pop(role, None)

    def holding(self) -> dict[Role, SlotState]:
        return {r: SlotState.PRESENT if r in self.seated else SlotState.EMPTY for r in Role}


class FakeDevice:
    """Only what DeviceView lists; games come from a real record in a temporary directory."""

    def __init__(self, data_dir: Path, sim: FakeSlots | None = None) -> None:
        self._store = GameStore(data_dir)
        self._sim = sim
        self._subscribers: list[queue.Queue[dict[str, Any]]] = []
        self.asked: list[str] = []

    @property
    def data_dir(self) -> Path:
        return self._store.data_dir

    @property
    def admin_pin(self) -> str | None:
        return None

    @property
    def is_simulator(self) -> bool:
        return self._sim is not None

    @property
    def sim(self) -> FakeSlots | None:
        return self._sim

    @property
    def can_enroll(self) -> bool:
        return False

    def status(self) -> dict[str, Any]:
        return {"state": "idle", "game_id": self.current_game_id, "seq": 1, "fake": True}

    def subscribe(self) -> queue.Queue[dict[str, Any]]:
        q: queue.Queue[dict[str, Any]] = queue.Queue()
        self._subscribers.append(q)
        return q

    def unsubscribe(self, q: queue.Queue[dict[str, Any]]) -> None:
        self._subscribers.remove(q)

    def outputs(self) -> dict[str, Any]:
        return {"leds": {}, "played": []}

    def tunes_json(self) -> dict[str, list[list[float | None]]]:
        return {"ready": [[523.25, 0.1]]}

    @property
    def current_game_id(self) -> int:
        return self._store.current.id

    def game_ids(self) -> list[int]:
        return self._store.game_ids()

    def game(self, game_id: int) -> Game:
        return self._store.get(game_id)

    def new_game(self, abandon: int | None = None) -> int:
        self.asked.append("new_game")
        return self._store.new_game().id

    @property
    def sealed_games(self) -> tuple[int, ...]:
        return self._store.sealed

    def reveal_abandoned(self) -> list[int]:
        self.asked.append("reveal_abandoned")
        return self._store.reveal_abandoned()

    def declare_end(
        self, kind: EndingKind, winner: Side | None, game_id: int | None = None
    ) -> None:
        self.asked.append(f"declare_end:{kind.value}")
        self._store.declare_end(kind, winner)

    def start_enrollment(self, only: str | None = None) -> dict[str, Any]:
        raise AssertionError("not asked in these tests")

    def stop_enrollment(self) -> None:
        raise AssertionError("not asked in these tests")

    def skip_enrollment(self) -> dict[str, Any]:
        raise AssertionError("not asked in these tests")

    def choose_enrollment(self, piece: str) -> dict[str, Any]:
        raise AssertionError("not asked in these tests")

    def reader_faults(self) -> list[str]:
        return []

    def enrollment_status(self) -> dict[str, Any]:
        return {"active": False, "prompt": "", "progress": [0, 0], "last": ""}

    def selftest(self, *, tunes: Sequence[str] | None = None, force: bool = False) -> list[str]:
        raise AssertionError("not asked in these tests")

    def close(self) -> None:
        self._store.close()


def test_fake_device_has_only_protocol_members() -> None:
    public = {name for name in vars(FakeDevice) if not name.startswith("_")} - {"close"}
    assert public == _protocol_members()


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeDevice]:
    device = FakeDevice(tmp_path / "data", sim=FakeSlots())
    try:
        yield device
    finally:
        device.close()


def _client(device: DeviceView) -> Any:
    return create_app(device, {"TESTING": True, "ADMIN_PIN": PIN}).test_client()


def test_app_serves_a_device_that_offers_only_the_protocol(fake: FakeDevice) -> None:
    client = _client(fake)
    assert client.get("/api/status").json == fake.status()
    assert client.get("/").status_code == 200
    assert client.get("/api/games").json["current"] == 1
    response = client.post("/api/games", headers={"X-Admin-PIN": PIN})
    assert response.status_code == 201 and response.json["game_id"] == 2
    response = client.post(
        "/api/games/2/end", headers={"X-Admin-PIN": PIN}, json={"reason": "draw"}
    )
    assert response.status_code == 200, response.json
    assert response.json["ending"]["kind"] == "draw"
    assert fake.asked == ["new_game", "declare_end:draw"]
    assert client.get("/api/games/2").json["ending"]["kind"] == "draw"  # over: revealed
    assert client.get("/api/games/1").status_code == 200  # abandoned by the new game


def test_app_simulator_routes_use_the_protocol_slots(fake: FakeDevice, tmp_path: Path) -> None:
    client = _client(fake)
    assert client.put("/api/sim/slots/attacker", json={"piece": "W:5*G"}).status_code == 200
    assert fake.sim is not None and fake.sim.seated == {Role.ATTACKER: Piece.parse("W:5*G")}
    assert client.delete("/api/sim/slots/attacker").status_code == 200
    assert fake.sim.seated == {}
    assert client.get("/api/sim/tunes").json == fake.tunes_json()
    hardware = FakeDevice(tmp_path / "hw")
    try:
        assert _client(hardware).get("/api/sim/outputs").status_code == 404
    finally:
        hardware.close()
