"""Every public and simulator route through Flask's test client, bad input included."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.waiting import wait_until
from tests.support.web import (
    PIN,
    build_app,
    rank_leaks,
    running_device,
)

ADMIN = {"X-Admin-PIN": PIN}


@pytest.fixture
def hw_device(tmp_path: Path) -> Iterator[Any]:
    """A device that is not the simulator (key readers on mock pins)."""
    with running_device(tmp_path / "hw", kind="keys") as dev:
        yield dev


@pytest.fixture
def app(device: Any) -> Any:
    return build_app(device)


@pytest.fixture
def client(app: Any) -> Any:
    return app.test_client()


def _seat(client: Any, slot: str, piece: str) -> None:
    response = client.put(f"/api/sim/slots/{slot}", json={"piece": piece})
    assert response.status_code == 200, response.json


def _decide(client: Any, attacker: str, defender: str) -> dict[str, Any]:
    before = client.get("/api/status").json["challenge_count"]
    _seat(client, "attacker", attacker)
    _seat(client, "defender", defender)
    status = wait_until(
        lambda: (s := client.get("/api/status").json)["challenge_count"] > before and s
    )
    client.delete("/api/sim/slots/attacker")
    client.delete("/api/sim/slots/defender")
    wait_until(lambda: client.get("/api/status").json["state"] in ("idle", "game_over"))
    return status  # type: ignore[no-any-return]


def _flag_falls(client: Any) -> None:
    _decide(client, "W:PVT", "B:FLG")


# -- status -------------------------------------------------------------------


def test_status_has_the_contract_keys(client: Any) -> None:
    body = client.get("/api/status").json
    assert set(body) >= {
        "state",
        "game_id",
        "challenge_count",
        "started_at",
        "eliminated",
        "last_verdict",
        "verdicts",
        "slots",
        "readers",
        "ending",
        "message",
        "mode",
        "enrolling",
        "seq",
    }
    assert body["state"] == "idle" and body["mode"] == "sim"
    assert body["slots"] == {"attacker": "empty", "defender": "empty"}


def test_status_shows_verdict_after_challenge(client: Any) -> None:
    status = _decide(client, "W:SPY", "B:5*G")
    assert status["last_verdict"] == "attacker"
    assert status["eliminated"] == {"W": 0, "B": 1}
    assert status["verdicts"] == [{"number": 1, "attacker_side": "W", "result": "attacker"}]


def test_status_page_renders_live_shell(client: Any) -> None:
    response = client.get("/")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert 'id="live"' in html and "/static/status.js" in html
    assert "<style" not in html and "style=" not in html  # the CSP forbids inline style
    assert "<script>" not in html  # nor inline script


def test_status_page_links_sim_only_in_sim_mode(client: Any, hw_device: Any) -> None:
    assert 'href="/sim"' in client.get("/").get_data(as_text=True)
    hw_client = build_app(hw_device).test_client()
    assert 'href="/sim"' not in hw_client.get("/").get_data(as_text=True)


# -- security headers ---------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/api/status", "/games", "/static/style.css", "/nowhere"])
def test_headers_secure_on_every_response(client: Any, path: str) -> None:
    headers = client.get(path).headers
    csp = headers["Content-Security-Policy"]
    assert "default-src 'self'" in csp and "unsafe-inline" not in csp
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["Referrer-Policy"] == "no-referrer"
    assert headers["X-Frame-Options"] == "DENY"


def test_api_responses_not_cached(client: Any) -> None:
    assert client.get("/api/status").headers["Cache-Control"] == "no-store"


# -- games and the reveal -----------------------------------------------------------


def test_api_game_refused_while_on(client: Any) -> None:
    response = client.get("/api/games/1")
    assert response.status_code == 403
    assert "still on" in response.json["error"]


def test_api_game_unknown_is_404_json(client: Any) -> None:
    response = client.get("/api/games/999")
    assert response.status_code == 404
    assert "error" in response.json
    assert client.get("/api/games/abc").status_code == 404
    assert client.get("/api/games/-1").status_code == 404
    assert client.get("/api/games/99999999999999999999999").status_code == 404


def test_api_game_full_record_once_over(client: Any) -> None:
    _decide(client, "W:SPY", "B:5*G")
    _flag_falls(client)
    record = client.get("/api/games/1").json
    assert record["over"] and record["ending"]["kind"] == "flag_captured"
    assert record["challenges"][0]["attacker"] == "W:SPY"
    assert record["fallen"]["B"] == ["B:5*G", "B:FLG"]
    assert len(record["survivors"]["W"]) == 21


def test_api_games_lists_summaries_without_ranks(client: Any) -> None:
    _decide(client, "W:SPY", "B:5*G")
    body = client.get("/api/games").json
    assert body["current"] == 1
    assert body["games"][0]["id"] == 1 and body["games"][0]["challenge_count"] == 1
    assert "challenges" not in body["games"][0]


def test_games_page_links_only_finished(client: Any) -> None:
    html = client.get("/games").get_data(as_text=True)
    assert "in progress" in html and 'href="/games/1"' not in html
    _flag_falls(client)
    html = client.get("/games").get_data(as_text=True)
    assert 'href="/games/1"' in html and "Flag captured: White wins" in html


def test_game_page_still_on_is_403(client: Any) -> None:
    response = client.get("/games/1")
    assert response.status_code == 403
    assert "still on" in response.get_data(as_text=True)


def test_game_page_reveal_shows_ranks_survivors_fallen(client: Any) -> None:
    _decide(client, "W:SPY", "B:5*G")
    _flag_falls(client)
    html = client.get("/games/1").get_data(as_text=True)
    assert "General of the Army" in html and "Spy" in html
    assert "Survivors (21)" in html and "Fallen (2)" in html  # White all; Black lost two
    assert "Fallen (0)" in html
    assert "Flag captured: White wins" in html


def test_game_page_unknown_is_404(client: Any) -> None:
    assert client.get("/games/42").status_code == 404


# -- damaged records ------------------------------------------------------------------


def _damage_game_1(client: Any, device: Any, where: str) -> None:
    """Game 1: one challenge and a declared draw, then game 2; then damage game 1's file.

    ``where``: ``header`` or ``challenge`` (that line fails its checksum), or
    ``after_end`` (a garbage line after the ending).
    """
    _decide(client, "W:SPY", "B:5*G")
    assert client.post("/api/games/1/end", json={"reason": "draw"}, headers=ADMIN).status_code
    assert client.post("/api/games", headers=ADMIN).status_code == 201
    path = Path(device.store.games_dir) / "000001.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    assert len(lines) == 3  # header, challenge, end
    if where == "after_end":
        lines.append(b"garbage\n")
    else:
        index = {"header": 0, "challenge": 1}[where]
        lines[index] = lines[index].replace(b'"t":', b'"T":')
    path.write_bytes(b"".join(lines))


def _warnings(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.WARNING]


@pytest.mark.parametrize("where", ["header", "challenge"])
@pytest.mark.parametrize("path", ["/api/games/1", "/games/1"])
def test_game_damaged_record_is_clear_503_one_warning(
    client: Any,
    device: Any,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    where: str,
    path: str,
) -> None:
    _damage_game_1(client, device, where)
    caplog.clear()
    caplog.set_level(logging.WARNING)
    response = client.get(path)
    assert response.status_code == 503
    text = response.get_data(as_text=True)
    if path.startswith("/api/"):
        text = response.json["error"]
    assert "game 1" in text and "damaged" in text
    assert str(tmp_path) not in text and "jsonl" not in text
    assert rank_leaks(text) == []  # nothing of the intact part is shown
    [warning] = _warnings(caplog)
    assert warning.levelno == logging.WARNING and warning.exc_info is None
    assert "game 1" in warning.getMessage()


def test_game_damaged_after_ending_shows_intact_part_with_notice(
    client: Any, device: Any, caplog: pytest.LogCaptureFixture
) -> None:
    _damage_game_1(client, device, "after_end")
    caplog.set_level(logging.WARNING)
    record = client.get("/api/games/1").json
    assert record["damaged"] is True and "damaged" in record["notice"]
    assert record["ending"]["kind"] == "draw" and record["challenges"][0]["attacker"] == "W:SPY"
    page = client.get("/games/1")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert 'id="damaged-notice"' in html and "Spy" in html
    games = client.get("/games").get_data(as_text=True)
    assert 'href="/games/1"' in games and "partly damaged" in games
    assert all(r.exc_info is None for r in _warnings(caplog))


# -- the event stream (headers and first lines; live reading is in test_web_serve) -----


def test_events_stream_opens_with_comment_and_status(client: Any) -> None:
    response = client.get("/api/events", buffered=False)
    assert response.status_code == 200
    assert response.mimetype == "text/event-stream"
    assert response.headers["Cache-Control"] == "no-cache"
    # The opening, written as one piece by the feed's writer: a comment, the retry delay,
    # then the current status as the first event.
    opening = next(iter(response.response))
    text = opening.decode() if isinstance(opening, bytes) else opening
    comment, event = text.split("\n\n")[:2]
    assert comment.startswith(": ") and "\nretry: " in comment
    assert event.startswith("id: ") and "\ndata: {" in event and '"state":"idle"' in event
    response.close()


# -- simulator API ----------------------------------------------------------------


def test_sim_seat_and_remove_change_slots(client: Any) -> None:
    _seat(client, "attacker", "W:PVT")
    wait_until(lambda: client.get("/api/status").json["slots"]["attacker"] == "present")
    response = client.delete("/api/sim/slots/attacker")
    assert response.status_code == 200
    wait_until(lambda: client.get("/api/status").json["slots"]["attacker"] == "empty")


def test_sim_panel_shows_pieces_seated_from_the_terminal(client: Any, device: Any) -> None:
    """Issue 8, item 10: the panel showed its slots empty while the terminal had seated both."""
    from arbiter.rules.verdict import Role

    device.sim.seat(Role.ATTACKER, "W:SPY")  # as the terminal's `attacker W:SPY` does
    wait_until(lambda: client.get("/api/status").json["slots"]["attacker"] == "present")
    assert client.get("/api/sim/slots").json == {"attacker": "present", "defender": "empty"}
    html = client.get("/sim").get_data(as_text=True)
    assert 'data-seen="present">seated (present)</p>' in html
    assert 'data-seen="empty">empty</p>' in html
    assert "SPY" not in html and "Spy" not in html.split("<select", 1)[0]
    js = client.get("/static/sim.js").get_data(as_text=True)
    assert '"/api/sim/slots"' in js and "showSlots" in js  # the panel follows it live


def test_sim_slots_say_seated_as_soon_as_the_seat_is_answered(client: Any, device: Any) -> None:
    """A CI run's browser test: the panel's poll asked between the seat's answer and the
    device taking the reading said "empty", and the panel forgot the piece it had seated."""
    import threading

    busy, release = threading.Event(), threading.Event()

    def hold_the_worker() -> None:  # as a tune or a self-test keeps it busy
        busy.set()
        release.wait(30)

    holder = threading.Thread(target=device._call, args=(hold_the_worker,))
    holder.start()
    try:
        busy.wait(30)
        _seat(client, "attacker", "W:SPY")
        assert client.get("/api/status").json["slots"]["attacker"] == "empty"  # not yet taken
        assert client.get("/api/sim/slots").json == {"attacker": "present", "defender": "empty"}
        assert 'data-seen="present">seated (present)</p>' in client.get("/sim").get_data(
            as_text=True)
    finally:
        release.set()
        holder.join(30)
    wait_until(lambda: client.get("/api/status").json["slots"]["attacker"] == "present")


def test_sim_seat_response_does_not_echo_piece(client: Any) -> None:
    response = client.put("/api/sim/slots/attacker", json={"piece": "W:SPY"})
    assert "SPY" not in response.get_data(as_text=True)


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"[]",
        b'"W:PVT"',
        b"{}",
        b'{"piece": 5}',
        b'{"piece": ""}',
        b'{"piece": "W:XYZ"}',
        b'{"piece": "Q:PVT"}',
        b'{"piece": "PVT"}',
        b'{"piece": "' + b"W:" + b"P" * 200 + b'"}',
        b"\xff\xfe",
    ],
)
def test_sim_seat_bad_input_is_400_json(client: Any, body: bytes) -> None:
    response = client.put(
        "/api/sim/slots/attacker", data=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert isinstance(response.json["error"], str) and response.json["error"]


@pytest.mark.parametrize(
    "body",
    [
        "[" * 30000 + "]" * 30000,
        '{"a":' * 10000 + "1" + "}" * 10000,
        '{"piece": "W:PVT"' + "[" * 30000,
    ],
)
def test_sim_seat_deeply_nested_json_is_400(client: Any, body: str) -> None:
    response = client.put(
        "/api/sim/slots/attacker", data=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert "JSON" in response.json["error"]


@pytest.mark.parametrize("method", ["put", "delete"])
def test_sim_wrong_slot_name_is_400(client: Any, method: str) -> None:
    response = getattr(client, method)("/api/sim/slots/middle", json={"piece": "W:PVT"})
    assert response.status_code == 400
    assert "attacker or defender" in response.json["error"]


def test_sim_outputs_show_leds_and_played(client: Any) -> None:
    _decide(client, "W:SPY", "B:PVT")
    body = client.get("/api/sim/outputs").json
    assert set(body["leds"]) == {"attacker", "defender", "status"}
    assert body["leds"]["defender"]["mode"] in ("on", "off", "blink")
    assert any(p["name"] == "ready" for p in body["played"])


def test_sim_tunes_are_note_lists(client: Any) -> None:
    tunes = client.get("/api/sim/tunes").json
    assert {"battle", "taps", "error", "ready", "fault"} <= set(tunes)
    freq, seconds = tunes["taps"][0]
    assert (freq is None or freq > 0) and seconds > 0


def test_sim_ranks_list_all_fifteen(client: Any) -> None:
    body = client.get("/api/sim/ranks").json
    assert len(body["ranks"]) == 15 and body["ranks"][0]["code"] == "5*G"
    assert [s["letter"] for s in body["sides"]] == ["W", "B"]


def test_sim_page_has_panel(client: Any) -> None:
    html = client.get("/sim").get_data(as_text=True)
    assert 'id="sim-panel"' in html and "/static/sim.js" in html


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/sim"),
        ("put", "/api/sim/slots/attacker"),
        ("delete", "/api/sim/slots/defender"),
        ("get", "/api/sim/outputs"),
        ("get", "/api/sim/slots"),
        ("get", "/api/sim/tunes"),
        ("get", "/api/sim/ranks"),
    ],
)
def test_sim_routes_404_without_simulator(hw_device: Any, method: str, path: str) -> None:
    hw_client = build_app(hw_device).test_client()
    response = getattr(hw_client, method)(path, json={"piece": "W:PVT"})
    assert response.status_code == 404
    if path.startswith("/api/"):
        assert "error" in response.json


# -- error handling ------------------------------------------------------------------


def test_unknown_api_route_is_json_404(client: Any) -> None:
    response = client.get("/api/nothing")
    assert response.status_code == 404 and "error" in response.json


def test_wrong_method_is_json_405(client: Any) -> None:
    response = client.post("/api/status")
    assert response.status_code == 405 and "error" in response.json
    assert "GET" in response.headers["Allow"]


def test_oversized_body_is_413_json(client: Any) -> None:
    response = client.put(
        "/api/sim/slots/attacker",
        data=b'{"piece": "' + b"x" * 100_000 + b'"}',
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 413 and "error" in response.json


def test_app_refuses_huge_declared_body_413(app: Any, client: Any) -> None:
    assert app.config["MAX_CONTENT_LENGTH"] <= 64 * 1024
    response = client.put(
        "/api/sim/slots/attacker",
        input_stream=io.BytesIO(b"[" * 1024),  # 50 MB announced, never read
        environ_overrides={"CONTENT_LENGTH": str(50 * 1024 * 1024)},
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 413 and "error" in response.json


def test_unknown_page_is_html_404(client: Any) -> None:
    response = client.get("/nowhere")
    assert response.status_code == 404 and response.mimetype == "text/html"


def test_unexpected_error_is_json_500_without_traceback(app: Any, client: Any) -> None:
    device = app.extensions["arbiter"]

    def broken() -> dict[str, Any]:
        raise RuntimeError("secret detail W:SPY")

    device.status = broken
    response = client.get("/api/status")
    assert response.status_code == 500
    assert "W:SPY" not in response.get_data(as_text=True)
    assert "error" in response.json
