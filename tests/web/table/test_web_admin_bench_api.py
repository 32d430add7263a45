"""The bench's admin API: enrollment and the self-test for commands beside a running arbiter.

Auth (PIN, session + CSRF), errors, and that nothing in any answer names a rank.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arbiter.rules.verdict import Role
from tests.support.waiting import wait_until
from tests.support.web import PIN, admin_login, build_app, rank_leaks, running_device

ADMIN = {"X-Admin-PIN": PIN}
QUICK = {"tunes": ["ready"]}

#: Every bench endpoint, with a body that would be accepted.
ENDPOINTS = [
    ("post", "/api/admin/selftest", QUICK),
    ("post", "/api/admin/enrollment", {"only": None}),
    ("delete", "/api/admin/enrollment", None),
    ("post", "/api/admin/enrollment/skip", None),
]


@pytest.fixture
def client(device: Any) -> Any:
    return build_app(device).test_client()


@pytest.fixture
def rfid(tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    """A device with RDM6300 readers (loop:// ports) and its client."""
    with running_device(tmp_path / "rfid", kind="rfid") as dev:
        yield dev, build_app(dev).test_client()


def _call(client: Any, method: str, path: str, body: Any, **kwargs: Any) -> Any:
    return getattr(client, method)(path, json=body, **kwargs)


def _play_one_challenge(device: Any) -> None:
    device.sim.seat(Role.ATTACKER, "W:SPY")
    device.sim.seat(Role.DEFENDER, "B:5*G")
    wait_until(lambda: device.status()["challenge_count"] == 1)


# -- auth ------------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS)
def test_bench_api_needs_the_pin(client: Any, method: str, path: str, body: Any) -> None:
    response = _call(client, method, path, body)
    assert response.status_code == 401 and "X-Admin-PIN" in response.json["error"]
    response = _call(client, method, path, body, headers={"X-Admin-PIN": "0000"})
    assert response.status_code == 403 and response.json["error"] == "wrong admin PIN"


@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS)
def test_bench_api_session_needs_its_csrf_token(
    client: Any, method: str, path: str, body: Any
) -> None:
    token = admin_login(client)
    response = _call(client, method, path, body)
    assert response.status_code == 403 and "X-CSRF-Token" in response.json["error"]
    response = _call(client, method, path, body, headers={"X-CSRF-Token": "forged"})
    assert response.status_code == 403
    # With the session's token the request gets past the gate (what it then says
    # depends on the device: the simulator has no RFID reader).
    response = _call(client, method, path, body, headers={"X-CSRF-Token": token})
    assert response.status_code in (200, 409), response.json


# -- self-test ---------------------------------------------------------------------------


@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
def test_bench_api_selftest_reports_lines_and_no_rank(client: Any, device: Any) -> None:
    device.sim.seat(Role.ATTACKER, "W:SPY")  # a piece seated: the report says "present" only
    wait_until(lambda: device.status()["slots"]["attacker"] == "present")
    response = client.post("/api/admin/selftest", json=QUICK, headers=ADMIN)
    assert response.status_code == 200, response.json
    body = response.json
    assert body["passed"] is True and body["faults"] == []
    assert "tune ready: played (0.0 s)" in body["lines"] or any(
        line.startswith("tune ready: played") for line in body["lines"]
    )
    assert "slot attacker: present" in body["lines"]
    assert not any(line.startswith("tune taps") for line in body["lines"])  # only those asked
    assert rank_leaks(response.get_data(as_text=True)) == []


@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
def test_bench_api_selftest_refused_once_a_game_has_begun(client: Any, device: Any) -> None:
    _play_one_challenge(device)
    response = client.post("/api/admin/selftest", json=QUICK, headers=ADMIN)
    assert response.status_code == 409
    assert "game is in progress" in response.json["error"]
    assert rank_leaks(response.get_data(as_text=True)) == []
    assert client.post("/api/games", headers=ADMIN).status_code == 409  # asks to confirm
    abandon = {"abandon": device.status()["game_id"]}
    assert client.post("/api/games", json=abandon, headers=ADMIN).status_code == 201  # new game
    response = client.post("/api/admin/selftest", json=QUICK, headers=ADMIN)
    assert response.status_code == 200  # and the test may run again


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ({"tunes": ["nope"]}, 400, "no tune 'nope'"),
        ({"tunes": "ready"}, 400, "tunes must be a list"),
        ({"tunes": [1]}, 400, "tunes must be a list"),
        ([1, 2], 400, "the body must be"),
    ],
)
def test_bench_api_selftest_bad_bodies(
    client: Any, body: Any, status: int, words: str
) -> None:
    response = client.post("/api/admin/selftest", json=body, headers=ADMIN)
    assert response.status_code == status
    assert words in response.json["error"]


# -- enrollment ----------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS[1:])
def test_bench_api_enrollment_without_rfid_is_409(
    client: Any, method: str, path: str, body: Any
) -> None:
    response = _call(client, method, path, body, headers=ADMIN)
    assert response.status_code == 409 and "RFID reader" in response.json["error"]


def test_bench_api_enrollment_start_skip_stop(rfid: tuple[Any, Any]) -> None:
    _device, client = rfid
    response = client.post("/api/admin/enrollment", json={}, headers=ADMIN)
    assert response.status_code == 201
    first = response.json
    assert first["active"] is True and first["progress"] == [0, 42]
    assert first["prompt"].startswith("Put W:5*G in the ATTACKER slot")  # admin only
    public = client.get("/api/status").get_data(as_text=True)
    assert rank_leaks(public) == [] and client.get("/api/status").json["enrolling"] is True
    skipped = client.post("/api/admin/enrollment/skip", headers=ADMIN)
    assert skipped.status_code == 200
    assert skipped.json["last"] == "skipped W:5*G"
    assert skipped.json["prompt"] != first["prompt"]
    stopped = client.delete("/api/admin/enrollment", headers=ADMIN)
    assert stopped.status_code == 200 and stopped.json["active"] is False
    again = client.post("/api/admin/enrollment/skip", headers=ADMIN)
    assert again.status_code == 409 and again.json["error"] == "enrollment is not on"
    assert client.get("/api/status").json["enrolling"] is False


def test_bench_api_enrollment_of_one_piece_ends_after_it(rfid: tuple[Any, Any]) -> None:
    _device, client = rfid
    response = client.post("/api/admin/enrollment", json={"only": "B:PVT#2"}, headers=ADMIN)
    assert response.status_code == 201 and response.json["progress"] == [0, 1]
    skipped = client.post("/api/admin/enrollment/skip", headers=ADMIN).json
    assert skipped["active"] is False and skipped["last"] == "skipped B:PVT#2"


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"only": "W:PVT#9"}, "W:PVT"),
        ({"only": "banana"}, ""),
        ({"only": 3}, "only must be a piece"),
        ({"only": "x" * 40}, "only must be a piece"),
    ],
)
def test_bench_api_enrollment_bad_piece_is_400_and_mode_stays_off(
    rfid: tuple[Any, Any], body: Any, words: str
) -> None:
    _device, client = rfid
    response = client.post("/api/admin/enrollment", json=body, headers=ADMIN)
    assert response.status_code == 400 and words in response.json["error"]
    assert client.get("/api/admin/enrollment", headers=ADMIN).json["active"] is False
