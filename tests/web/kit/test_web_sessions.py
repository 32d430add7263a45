"""Admin sessions end on the server: a cookie copied before logout, a PIN change
or the idle timeout opens nothing afterwards, and starts no game."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.clock import FakeClock
from tests.support.spawn import gg_arbiter
from tests.support.web import (
    PIN,
    admin_login,
    build_app,
    http_get,
    http_json,
    live_server,
    running_device,
)
from web.kit import auth
from web.kit.sessions import SessionRegistry

COOKIE = "gg_admin"
IDLE = 600.0


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def app(device: Any, clock: FakeClock) -> Any:
    return build_app(device, ADMIN_IDLE_SECONDS=IDLE, ADMIN_CLOCK=clock)


def _copy(app: Any, client: Any) -> Any:
    """A second client holding a copy of ``client``'s session cookie (as sniffed)."""
    cookie = client.get_cookie(COOKIE)
    assert cookie is not None
    thief = app.test_client()
    thief.set_cookie(COOKIE, cookie.value)
    return thief


def _assert_refused(app: Any, thief: Any, token: str) -> None:
    """The copied cookie opens no admin page and starts no game."""
    game = thief.get("/api/status").json["game_id"]
    page = thief.get("/admin")
    assert page.status_code == 302 and page.headers["Location"].endswith("/admin/login")
    api = thief.post("/api/games", headers={"X-CSRF-Token": token})
    assert api.status_code == 401
    form = thief.post("/admin/new-game", data={"csrf": token})
    assert form.status_code == 403
    assert thief.get("/api/status").json["game_id"] == game


def test_copied_cookie_works_before_logout(app: Any) -> None:
    """The copy is a working session to begin with (so the refusals below mean something)."""
    client = app.test_client()
    token = admin_login(client)
    thief = _copy(app, client)
    assert thief.get("/admin").status_code == 200
    assert thief.post("/api/games", headers={"X-CSRF-Token": token}).status_code == 201


def test_copied_cookie_refused_after_logout(app: Any) -> None:
    client = app.test_client()
    token = admin_login(client)
    thief = _copy(app, client)
    assert client.post("/admin/logout", data={"csrf": token}).status_code == 302
    _assert_refused(app, thief, token)


def test_copied_cookie_refused_after_pin_change(app: Any) -> None:
    client = app.test_client()
    token = admin_login(client)
    thief = _copy(app, client)
    auth.set_pin(app.config["DATA_DIR"], PIN)  # even the same PIN again ends the sessions
    _assert_refused(app, thief, token)
    _assert_refused(app, client, token)


def test_copied_cookie_refused_after_idle_timeout(app: Any, clock: FakeClock) -> None:
    client = app.test_client()
    token = admin_login(client)
    thief = _copy(app, client)
    clock.advance(IDLE - 1)
    assert client.get("/admin").status_code == 200  # in use: the idle time restarts
    clock.advance(IDLE - 1)
    assert thief.get("/admin").status_code == 200
    clock.advance(IDLE)
    _assert_refused(app, thief, token)


def test_session_ends_after_its_lifetime_even_in_use(device: Any, clock: FakeClock) -> None:
    app = build_app(device, ADMIN_IDLE_SECONDS=IDLE, ADMIN_CLOCK=clock)
    client = app.test_client()
    token = admin_login(client)
    hours = int(app.permanent_session_lifetime.total_seconds() // (IDLE / 2))
    for _ in range(hours):
        clock.advance(IDLE / 2)
        client.get("/api/admin/enrollment")
    _assert_refused(app, client, token)


def test_session_registry_limit_drops_least_recent(clock: FakeClock) -> None:
    registry = SessionRegistry(idle=60, lifetime=600, limit=2, clock=clock)
    first, second = registry.open(), registry.open()
    clock.advance(1)
    assert registry.touch(first)
    third = registry.open()
    assert registry.touch(first) and registry.touch(third)
    assert not registry.touch(second)
    assert len(registry) == 2


def test_admin_pages_say_the_network_is_plain_http(app: Any) -> None:
    client = app.test_client()
    assert "plain HTTP" in client.get("/admin/login").get_data(as_text=True)
    admin_login(client)
    assert "plain HTTP" in client.get("/admin").get_data(as_text=True)


# -- a damaged admin.json ----------------------------------------------------------


def test_damaged_admin_file_keeps_public_page_admin_says_repair(tmp_path: Path) -> None:
    """Through waitress: the public page answers, admin routes say how to repair,
    and ``set-pin`` (what the hint names) repairs it while the server runs."""
    data = tmp_path / "data"
    with running_device(data) as dev:
        (data / "admin.json").write_text('{"secret": "x", "pin":', encoding="utf-8")
        app = build_app(dev, ADMIN_PIN=None)
        with live_server(app) as server:
            assert http_get(server, "/api/status")[0] == 200
            assert http_get(server, "/")[0] == 200
            code, _, page = http_get(server, "/admin/login")
            # The hint names this data directory: the default one is another's.
            assert code == 503 and f"gg-arbiter set-pin --data {data}" in page
            assert http_get(server, "/admin")[0] == 503
            code, body = http_json(server, "POST", "/api/games", headers={"X-Admin-PIN": PIN})
            assert code == 503 and "gg-arbiter set-pin" in body["error"]
            auth.set_pin(data, "975310")
            assert (data / "admin.json.damaged").exists()
            code, body = http_json(server, "POST", "/api/games", headers={"X-Admin-PIN": "975310"})
            assert code == 201 and body["game_id"] == 2


def test_damaged_admin_file_wrong_pins_not_counted(device: Any) -> None:
    """While damaged, a PIN cannot be checked: 503 each time, never 429."""
    app = build_app(device, ADMIN_PIN=None, PIN_MAX_FAILURES=2)
    (Path(app.config["DATA_DIR"]) / "admin.json").write_text("[]", encoding="utf-8")
    client = app.test_client()
    for _ in range(4):
        response = client.post("/api/games", headers={"X-Admin-PIN": PIN})
        assert response.status_code == 503 and "set-pin" in response.json["error"]


def test_copied_cookie_refused_after_set_pin_command(app: Any) -> None:
    """`gg-arbiter set-pin`, another process, ends the running server's sessions."""
    client = app.test_client()
    token = admin_login(client)
    thief = _copy(app, client)
    done = subprocess.run(
        [*gg_arbiter(), "set-pin", "--data", str(app.config["DATA_DIR"]), "864209"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    _assert_refused(app, thief, token)
