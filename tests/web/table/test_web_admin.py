"""Admin: the PIN on the JSON API, the login page, CSRF, rate limiting, the actions."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arbiter.device.arbiter import DeviceError
from arbiter.storage.journal import StoreError
from tests.support.waiting import wait_until
from tests.support.web import (
    PIN,
    admin_login,
    build_app,
    csrf_field,
    http_json,
    live_server,
    running_device,
)
from web.kit import auth

ADMIN = {"X-Admin-PIN": PIN}
END = "/api/games/1/end"


@pytest.fixture
def rfid_client(tmp_path: Path) -> Iterator[Any]:
    """A logged-in client of a device with RFID readers (on loop:// ports)."""
    with running_device(tmp_path / "rfid", kind="rfid") as dev:
        yield build_app(dev).test_client()


@pytest.fixture
def app(device: Any) -> Any:
    return build_app(device)


@pytest.fixture
def client(app: Any) -> Any:
    return app.test_client()


# -- JSON API: new game ------------------------------------------------------------


def test_api_new_game_needs_pin(client: Any) -> None:
    response = client.post("/api/games")
    assert response.status_code == 401
    assert "X-Admin-PIN" in response.json["error"]
    assert "WWW-Authenticate" in response.headers


def test_api_new_game_wrong_pin_403(client: Any) -> None:
    response = client.post("/api/games", headers={"X-Admin-PIN": "0000"})
    assert response.status_code == 403 and "error" in response.json
    assert client.get("/api/status").json["game_id"] == 1


def test_api_new_game_with_pin_201(client: Any) -> None:
    response = client.post("/api/games", headers=ADMIN)
    assert response.status_code == 201
    assert response.json["game_id"] == 2
    assert client.get("/api/status").json["game_id"] == 2
    # the game left on is recorded as abandoned, so its record is revealed
    assert client.get("/api/games/1").json["ending"]["kind"] == "abandoned"


def test_api_pin_rate_limited_429(app: Any) -> None:
    client = app.test_client()
    for _ in range(5):
        assert client.post("/api/games", headers={"X-Admin-PIN": "1111"}).status_code == 403
    response = client.post("/api/games", headers=ADMIN)  # even the right PIN now waits
    assert response.status_code == 429
    assert int(response.headers["Retry-After"]) > 0
    assert "error" in response.json
    other = app.test_client()
    other_ip = {"REMOTE_ADDR": "10.0.0.9"}
    assert other.post("/api/games", headers=ADMIN, environ_base=other_ip).status_code == 201


def test_api_pin_limit_window_configurable(device: Any) -> None:
    client = build_app(device, PIN_MAX_FAILURES=2).test_client()
    client.post("/api/games", headers={"X-Admin-PIN": "1"})
    client.post("/api/games", headers={"X-Admin-PIN": "2"})
    assert client.post("/api/games", headers=ADMIN).status_code == 429


@pytest.mark.timeout(120)
def test_api_pin_concurrent_wrong_pins_stay_within_budget(
    app: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_check = auth.check_pin
    lock = threading.Lock()
    running = [0, 0]  # now, peak

    def counted_check(data_dir: Any, pin: str) -> bool:
        with lock:
            running[0] += 1
            running[1] = max(running[1], running[0])
        try:
            return real_check(data_dir, pin)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(auth, "check_pin", counted_check)
    start = threading.Barrier(40)
    codes: list[int] = []

    with live_server(app) as server:

        def guess() -> None:
            start.wait(timeout=30)
            status, body = http_json(server, "POST", "/api/games", headers={"X-Admin-PIN": "1111"})
            assert "error" in body
            codes.append(status)

        threads = [threading.Thread(target=guess) for _ in range(40)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert len(codes) == 40
        assert 1 <= codes.count(403) <= 5, codes
        assert codes.count(429) == 40 - codes.count(403), codes
        assert running[1] <= 2  # hash checks capped
        # the budget is spent: even the right PIN waits now
        assert http_json(server, "POST", "/api/games", headers=ADMIN)[0] == 429
    assert app.extensions["arbiter"].status()["game_id"] == 1


def test_api_pin_check_queue_full_503_and_attempt_given_back(
    device: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = build_app(device, PIN_CHECK_LIMIT=1, PIN_CHECK_WAIT=0.05, PIN_MAX_FAILURES=1)
    inside = threading.Event()
    release = threading.Event()
    real_check = auth.check_pin

    def held_check(data_dir: Any, pin: str) -> bool:
        inside.set()
        release.wait(timeout=30)
        return real_check(data_dir, pin)

    monkeypatch.setattr(auth, "check_pin", held_check)
    holder = threading.Thread(
        target=lambda: app.test_client().post(
            "/api/games", headers=ADMIN, environ_base={"REMOTE_ADDR": "10.0.0.1"}
        )
    )
    holder.start()
    try:
        assert inside.wait(timeout=10)
        response = app.test_client().post("/api/games", headers=ADMIN)
        assert response.status_code == 503 and "error" in response.json
        assert int(response.headers["Retry-After"]) > 0
    finally:
        release.set()
        holder.join(timeout=30)
    monkeypatch.setattr(auth, "check_pin", real_check)
    # the refused check cost no attempt: the one wrong PIN allowed still gets checked
    response = app.test_client().post("/api/games", headers={"X-Admin-PIN": "1111"})
    assert response.status_code == 403


# -- JSON API: declared endings ------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "kind", "winner"),
    [
        ({"reason": "flag_home", "winner": "B"}, "flag_home", "B"),
        ({"reason": "resignation", "winner": "W"}, "resignation", "W"),
        ({"reason": "draw", "winner": None}, "draw", None),
        ({"reason": "draw"}, "draw", None),
    ],
)
def test_api_end_records_ending(client: Any, body: dict[str, Any], kind: str, winner: Any) -> None:
    response = client.post(END, json=body, headers=ADMIN)
    assert response.status_code == 200, response.json
    assert response.json["ending"]["kind"] == kind and response.json["ending"]["winner"] == winner
    status = client.get("/api/status").json
    assert status["state"] == "game_over" and status["ending"]["kind"] == kind
    assert client.get("/api/games/1").status_code == 200


@pytest.mark.parametrize(
    "body",
    [
        b"{bad",
        b"[1]",
        b'{"reason": "flag_captured", "winner": "W"}',
        b'{"reason": "abandoned"}',
        b'{"reason": "lunch", "winner": "W"}',
        b'{"reason": "resignation"}',
        b'{"reason": "flag_home", "winner": null}',
        b'{"reason": "draw", "winner": "W"}',
        b'{"reason": "resignation", "winner": "X"}',
        b'{"reason": "resignation", "winner": 1}',
        b'{"reason": 7}',
    ],
)
def test_api_end_bad_input_400(client: Any, body: bytes) -> None:
    response = client.post(END, data=body, headers={**ADMIN, "Content-Type": "application/json"})
    assert response.status_code == 400
    assert response.json["error"]
    assert client.get("/api/status").json["ending"] is None


def test_api_end_needs_pin(client: Any) -> None:
    assert client.post(END, json={"reason": "draw"}).status_code == 401
    wrong = client.post(END, json={"reason": "draw"}, headers={"X-Admin-PIN": "9999"})
    assert wrong.status_code == 403


def test_api_end_over_game_409(client: Any) -> None:
    assert client.post(END, json={"reason": "draw"}, headers=ADMIN).status_code == 200
    response = client.post(END, json={"reason": "draw"}, headers=ADMIN)
    assert response.status_code == 409 and "over" in response.json["error"]


def test_api_end_not_current_game_409(client: Any) -> None:
    client.post("/api/games", headers=ADMIN)  # game 1 abandoned, game 2 current
    response = client.post(END, json={"reason": "draw"}, headers=ADMIN)
    assert response.status_code == 409
    assert (
        client.post("/api/games/2/end", json={"reason": "draw"}, headers=ADMIN).status_code == 200
    )


def test_api_end_new_game_meanwhile_409_new_game_untouched(
    device: Any, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_declare = device.declare_end

    def new_game_first(*args: Any, **kwargs: Any) -> None:
        # another admin's NEW GAME reaches the worker just before this ending
        device.new_game()
        real_declare(*args, **kwargs)

    monkeypatch.setattr(device, "declare_end", new_game_first)
    response = client.post(END, json={"reason": "resignation", "winner": "W"}, headers=ADMIN)
    assert response.status_code == 409
    assert "not the current game" in response.json["error"]
    status = client.get("/api/status").json
    assert status["game_id"] == 2 and status["ending"] is None


def test_api_end_deeply_nested_body_400(client: Any) -> None:
    body = "[" * 30000 + "]" * 30000
    response = client.post(END, data=body, headers={**ADMIN, "Content-Type": "application/json"})
    assert response.status_code == 400 and response.json["error"]


def test_api_end_unwritable_record_503(device: Any, client: Any, monkeypatch: Any) -> None:
    def disk_full(*args: Any) -> None:
        raise StoreError("cannot append to the journal: No space left on device")

    monkeypatch.setattr(device.store, "declare_end", disk_full)
    response = client.post(END, json={"reason": "draw"}, headers=ADMIN)
    assert response.status_code == 503
    assert "cannot be written" in response.json["error"]
    assert "No space left" in response.json["error"]


def test_api_new_game_device_busy_503(device: Any, client: Any, monkeypatch: Any) -> None:
    def busy(abandon: int | None = None) -> int:
        raise DeviceError("the device is busy (a tune or self-test): try again")

    monkeypatch.setattr(device, "new_game", busy)
    response = client.post("/api/games", headers=ADMIN)
    assert response.status_code == 503
    assert response.json == {"error": "the device is busy (a tune or self-test): try again"}


def test_api_new_game_during_enrollment_503(rfid_client: Any) -> None:
    token = admin_login(rfid_client)
    rfid_client.post("/admin/enroll/start", data={"csrf": token})
    response = rfid_client.post("/api/games", headers=ADMIN)
    assert response.status_code == 503
    assert "enrollment" in response.json["error"]
    assert rfid_client.get("/api/status").json["game_id"] == 1


def test_api_end_unknown_game_404(client: Any) -> None:
    response = client.post("/api/games/77/end", json={"reason": "draw"}, headers=ADMIN)
    assert response.status_code == 404


# -- session + CSRF header on the API ------------------------------------------------


def test_api_session_needs_csrf_header(client: Any) -> None:
    token = admin_login(client)
    assert client.post("/api/games").status_code == 403
    assert client.post("/api/games", headers={"X-CSRF-Token": "nope"}).status_code == 403
    assert client.post("/api/games", headers={"X-CSRF-Token": token}).status_code == 201


def test_api_enrollment_status_admin_only(client: Any) -> None:
    assert client.get("/api/admin/enrollment").status_code == 401
    body = client.get("/api/admin/enrollment", headers=ADMIN).json
    assert body["active"] is False and body["progress"] == [0, 0]


# -- login page ----------------------------------------------------------------------


def test_admin_redirects_to_login(client: Any) -> None:
    response = client.get("/admin")
    assert response.status_code == 302 and response.headers["Location"].endswith("/admin/login")


def test_login_sets_strict_httponly_cookie(client: Any) -> None:
    response = client.get("/admin/login")
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie


def test_login_right_pin_opens_dashboard(client: Any) -> None:
    admin_login(client)
    html = client.get("/admin").get_data(as_text=True)
    assert "New game" in html and "Declare the ending" in html and "Self-test" in html


def test_login_wrong_pin_403(client: Any) -> None:
    token = csrf_field(client.get("/admin/login").get_data(as_text=True))
    response = client.post("/admin/login", data={"pin": "0000", "csrf": token})
    assert response.status_code == 403 and "Wrong PIN" in response.get_data(as_text=True)
    assert client.get("/admin").status_code == 302


def test_login_without_csrf_400(client: Any) -> None:
    client.get("/admin/login")
    assert client.post("/admin/login", data={"pin": PIN}).status_code == 400
    assert client.post("/admin/login", data={"pin": PIN, "csrf": "forged"}).status_code == 400
    assert client.get("/admin").status_code == 302


def test_login_rate_limited_429(client: Any) -> None:
    token = csrf_field(client.get("/admin/login").get_data(as_text=True))
    for _ in range(5):
        client.post("/admin/login", data={"pin": "0000", "csrf": token})
    response = client.post("/admin/login", data={"pin": PIN, "csrf": token})
    assert response.status_code == 429


def test_session_dropped_when_pin_changes(app: Any, client: Any) -> None:
    admin_login(client)
    auth.set_pin(app.config["DATA_DIR"], "555555")
    assert client.get("/admin").status_code == 302


def test_logout_ends_session(client: Any) -> None:
    token = admin_login(client)
    assert client.post("/admin/logout", data={"csrf": token}).status_code == 302
    assert client.get("/admin").status_code == 302


# -- admin actions --------------------------------------------------------------------


def test_admin_forms_refuse_missing_csrf(client: Any) -> None:
    admin_login(client)
    assert client.post("/admin/new-game", data={}).status_code == 400
    assert client.get("/api/status").json["game_id"] == 1


def test_admin_forms_refuse_without_login(client: Any) -> None:
    client.get("/admin/login")
    assert client.post("/admin/new-game", data={"csrf": "x"}).status_code == 403


def test_admin_new_game(client: Any) -> None:
    token = admin_login(client)
    response = client.post("/admin/new-game", data={"csrf": token}, follow_redirects=True)
    assert "Game 2 started" in response.get_data(as_text=True)
    assert client.get("/api/status").json["game_id"] == 2


def test_admin_declare_resignation(client: Any) -> None:
    token = admin_login(client)
    client.post(
        "/admin/end", data={"csrf": token, "game_id": "1", "reason": "resignation", "winner": "B"}
    )
    ending = client.get("/api/status").json["ending"]
    assert ending["kind"] == "resignation" and ending["winner"] == "B"


def test_admin_declare_bad_ending_flashes_error(client: Any) -> None:
    token = admin_login(client)
    response = client.post(
        "/admin/end",
        data={"csrf": token, "game_id": "1", "reason": "resignation", "winner": ""},
        follow_redirects=True,
    )
    assert "needs a winner" in response.get_data(as_text=True)
    assert client.get("/api/status").json["ending"] is None


def test_admin_end_form_carries_game_id(client: Any) -> None:
    admin_login(client)
    client.post("/api/games", headers=ADMIN)
    html = client.get("/admin").get_data(as_text=True)
    assert '<input type="hidden" name="game_id" value="2">' in html


def test_admin_end_stale_form_does_not_end_new_game(client: Any) -> None:
    token = admin_login(client)  # the page was shown for game 1
    client.post("/api/games", headers=ADMIN)  # then someone started game 2
    response = client.post(
        "/admin/end",
        data={"csrf": token, "game_id": "1", "reason": "resignation", "winner": "W"},
        follow_redirects=True,
    )
    assert "no longer the current game" in response.get_data(as_text=True)
    status = client.get("/api/status").json
    assert status["game_id"] == 2 and status["ending"] is None


@pytest.mark.parametrize("game_id", [None, "", "x", "-1"])
def test_admin_end_without_game_id_refused(client: Any, game_id: str | None) -> None:
    token = admin_login(client)
    data = {"csrf": token, "reason": "draw"}
    if game_id is not None:
        data["game_id"] = game_id
    response = client.post("/admin/end", data=data, follow_redirects=True)
    assert "reload the page" in response.get_data(as_text=True)
    assert client.get("/api/status").json["ending"] is None


def test_admin_end_unwritable_record_flashes(
    device: Any, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = admin_login(client)

    def disk_full(*args: Any) -> None:
        raise StoreError("cannot append to the journal: No space left on device")

    monkeypatch.setattr(device.store, "declare_end", disk_full)
    response = client.post(
        "/admin/end",
        data={"csrf": token, "game_id": "1", "reason": "draw"},
        follow_redirects=True,
    )
    assert response.status_code == 200
    assert "cannot be written" in response.get_data(as_text=True)


def test_admin_declare_draw_ignores_winner_field(client: Any) -> None:
    token = admin_login(client)
    client.post("/admin/end", data={"csrf": token, "game_id": "1", "reason": "draw", "winner": "W"})
    ending = client.get("/api/status").json["ending"]
    assert ending["kind"] == "draw" and ending["winner"] is None


def test_admin_enrollment_without_rfid_explains(client: Any) -> None:
    token = admin_login(client)
    html = client.get("/admin").get_data(as_text=True)
    assert "needs an RFID reader" in html
    response = client.post("/admin/enroll/start", data={"csrf": token}, follow_redirects=True)
    assert response.status_code == 200
    assert "RFID" in response.get_data(as_text=True)
    stop = client.post("/admin/enroll/stop", data={"csrf": token}, follow_redirects=True)
    assert stop.status_code == 200


@pytest.mark.timeout(120)
@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
def test_admin_selftest_reports_each_part(client: Any) -> None:
    token = admin_login(client)
    html = client.post("/admin/selftest", data={"csrf": token}).get_data(as_text=True)
    assert "LED attacker: lit" in html and "tune taps: played" in html
    assert "slot defender: empty" in html


def test_admin_selftest_during_game_flashes_refusal(client: Any) -> None:
    token = admin_login(client)
    client.put("/api/sim/slots/attacker", json={"piece": "W:SPY"})
    client.put("/api/sim/slots/defender", json={"piece": "B:PVT"})
    wait_until(lambda: client.get("/api/status").json["challenge_count"] == 1)
    response = client.post("/admin/selftest", data={"csrf": token})
    assert response.status_code == 302
    html = client.get("/admin").get_data(as_text=True)
    assert 'class="flash flash-error"' in html and "a game is in progress" in html
    assert "LED attacker" not in html


def test_admin_enroll_stop_device_error_flashes(
    device: Any, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = admin_login(client)

    def shut_down() -> None:
        raise DeviceError("the arbiter is shut down")

    monkeypatch.setattr(device, "stop_enrollment", shut_down)
    response = client.post("/admin/enroll/stop", data={"csrf": token}, follow_redirects=True)
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert "the arbiter is shut down" in html and "Enrollment stopped" not in html


def test_admin_new_game_device_error_flashes(
    device: Any, client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = admin_login(client)

    def busy(abandon: int | None = None) -> int:
        raise DeviceError("the device is busy (a tune or self-test): try again")

    monkeypatch.setattr(device, "new_game", busy)
    response = client.post("/admin/new-game", data={"csrf": token}, follow_redirects=True)
    assert response.status_code == 200
    assert "the device is busy" in response.get_data(as_text=True)


def test_admin_enrollment_walk_start_progress_stop(rfid_client: Any) -> None:
    token = admin_login(rfid_client)
    html = rfid_client.get("/admin").get_data(as_text=True)
    assert "needs an RFID reader" not in html and 'data-active="false"' in html
    rfid_client.post("/admin/enroll/start", data={"csrf": token})
    status = rfid_client.get("/api/admin/enrollment").json
    assert status["active"] is True
    assert status["progress"] == [0, 42]
    assert "attacker" in status["prompt"].lower()
    html = rfid_client.get("/admin").get_data(as_text=True)
    assert 'data-active="true"' in html and "/static/admin.js" in html
    assert rfid_client.get("/api/status").json["enrolling"] is True
    rfid_client.post("/admin/enroll/stop", data={"csrf": token})
    assert rfid_client.get("/api/admin/enrollment").json["active"] is False
    assert rfid_client.get("/api/status").json["enrolling"] is False


def test_admin_enrollment_only_one_piece(rfid_client: Any) -> None:
    token = admin_login(rfid_client)
    rfid_client.post("/admin/enroll/start", data={"csrf": token, "only": "W:PVT#3"})
    status = rfid_client.get("/api/admin/enrollment").json
    assert status["active"] is True and status["progress"] == [0, 1]


def test_admin_enrollment_bad_piece_flashes_error(rfid_client: Any) -> None:
    token = admin_login(rfid_client)
    response = rfid_client.post(
        "/admin/enroll/start", data={"csrf": token, "only": "W:NOPE"}, follow_redirects=True
    )
    assert response.status_code == 200
    assert "unknown rank" in response.get_data(as_text=True)
    assert rfid_client.get("/api/admin/enrollment").json["active"] is False


def test_admin_enrollment_prompt_never_public(rfid_client: Any) -> None:
    token = admin_login(rfid_client)
    rfid_client.post("/admin/enroll/start", data={"csrf": token})
    prompt = rfid_client.get("/api/admin/enrollment").json["prompt"]
    public = rfid_client.application.test_client()  # no session
    assert public.get("/api/admin/enrollment").status_code == 401
    for path in ("/", "/api/status", "/games", "/api/games"):
        assert prompt not in public.get(path).get_data(as_text=True)
