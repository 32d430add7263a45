"""The status page rehearses the flagship's enrollment: run --sim with reader.kind "mcu"
enrolls through the admin API while the simulator panel seats pieces (as stickers)."""

from __future__ import annotations

from pathlib import Path

from arbiter.app.assembly import build_arbiter
from arbiter.app.config import load_config
from arbiter.drivers.readers.sim import sticker_uid
from arbiter.rules.army import PhysicalPiece
from tests.support.waiting import wait_until
from tests.support.web import FAST_CONFIG, PIN, build_app

ADMIN = {"X-Admin-PIN": PIN}


def test_enrollment_on_the_page_with_the_simulator_panel(tmp_path: Path) -> None:
    config_path = tmp_path / "flagship.toml"
    config_path.write_text(FAST_CONFIG + '[reader]\nkind = "mcu"\n', encoding="utf-8")
    device = build_arbiter(load_config(config_path), data_dir=tmp_path / "data", sim=True)
    device.start()
    try:
        client = build_app(device).test_client()
        started = client.post("/api/admin/enrollment", json={}, headers=ADMIN)
        assert started.status_code == 201, started.get_json()
        assert started.get_json()["prompt"].startswith("Put W:5*G in the ATTACKER slot")
        assert client.put("/api/sim/slots/attacker", json={"piece": "W:5*G"}).status_code == 200

        def progress() -> list[int]:
            got: list[int] = client.get("/api/admin/enrollment", headers=ADMIN).get_json()[
                "progress"]
            return got

        wait_until(lambda: progress()[0] == 1, what="W:5*G enrolled")
        uid = sticker_uid(PhysicalPiece.parse("W:5*G"))
        status = client.get("/api/admin/enrollment", headers=ADMIN).get_json()
        assert status["last"] == f"W:5*G enrolled with tag {uid}"
        public = client.get("/api/status").get_data(as_text=True)
        assert uid not in public and "5*G" not in public  # no tag, no rank in public
    finally:
        device.close()


def test_the_page_enrolls_in_the_admins_own_order(tmp_path: Path) -> None:
    config_path = tmp_path / "flagship.toml"
    config_path.write_text(FAST_CONFIG + '[reader]\nkind = "mcu"\n', encoding="utf-8")
    device = build_arbiter(load_config(config_path), data_dir=tmp_path / "data", sim=True)
    device.start()
    try:
        client = build_app(device).test_client()
        off = client.post("/api/admin/enrollment/next", json={"piece": "B:SPY"}, headers=ADMIN)
        assert off.status_code == 409
        client.post("/api/admin/enrollment", json={}, headers=ADMIN)
        bad = client.post("/api/admin/enrollment/next", json={"piece": "B:KING"}, headers=ADMIN)
        assert bad.status_code == 400
        chosen = client.post("/api/admin/enrollment/next", json={"piece": "b:spy"},
                             headers=ADMIN)
        assert chosen.status_code == 200
        assert chosen.get_json()["prompt"].startswith("Put B:SPY#1 in the ATTACKER slot")
        client.put("/api/sim/slots/attacker", json={"piece": "B:SPY"})
        wait_until(lambda: client.get("/api/admin/enrollment", headers=ADMIN).get_json()[
            "last"].startswith("B:SPY#1 enrolled"), what="B:SPY#1 enrolled")
        again = client.post("/api/admin/enrollment/next", json={"piece": "B:SPY#1"},
                            headers=ADMIN)
        assert again.status_code == 409 and "already has a tag" in again.get_json()["error"]
    finally:
        device.close()
