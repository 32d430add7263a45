"""web.serve and the event stream over a real waitress server on loopback."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web_helpers import (
    SseClient,
    build_app,
    http_get,
    http_json,
    live_server,
    running_device,
    wait_for,
)
from web.serve import DEFAULT_THREADS, WebServerError, make_server

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def device(tmp_path: Path) -> Iterator[Any]:
    with running_device(tmp_path / "data") as dev:
        yield dev


def test_make_server_binds_ephemeral_port(device: Any) -> None:
    with live_server(build_app(device)) as server:
        assert server.port > 0
        assert server.url == f"http://127.0.0.1:{server.port}/"
        status, headers, body = http_get(server, "/api/status")
        assert status == 200 and '"state"' in body
        assert headers["server"] == "gg-arbiter"


def test_make_server_port_in_use_raises(device: Any) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(WebServerError):
            make_server(build_app(device), "127.0.0.1", port)


def test_make_server_default_threads_cover_twenty_viewers() -> None:
    assert DEFAULT_THREADS >= 20 + 8


def test_events_comment_at_once_then_status(device: Any) -> None:
    with live_server(build_app(device)) as server:
        stream = SseClient(server.port)
        try:
            assert stream.wait(lambda s: bool(s.comments) and bool(s.events), 10)
            assert stream.comments[0].startswith("gg-arbiter")
            head = stream.text()
            assert "Content-Type: text/event-stream" in head
            assert head.index(": gg-arbiter") < head.index("data: ")
            assert stream.events[0]["state"] == "idle"
        finally:
            stream.close()


def test_events_keepalive_comment_when_quiet(device: Any) -> None:
    with live_server(build_app(device, SSE_KEEPALIVE=0.2)) as server:
        stream = SseClient(server.port)
        try:
            assert stream.wait(lambda s: "keep-alive" in s.comments, 10)
        finally:
            stream.close()


def test_events_one_message_per_change(device: Any) -> None:
    with live_server(build_app(device)) as server:
        stream = SseClient(server.port)
        try:
            assert stream.wait(lambda s: len(s.events) >= 1, 10)
            http_json(server, "PUT", "/api/sim/slots/attacker", {"piece": "W:PVT"})
            assert stream.wait(
                lambda s: any(e["slots"]["attacker"] == "present" for e in s.events), 10
            )
            seqs = [e["seq"] for e in stream.events]
            assert seqs == sorted(set(seqs))  # each status once, in order
            assert "id: " in stream.text()
        finally:
            stream.close()


def test_events_subscription_dropped_when_client_goes(device: Any) -> None:
    app = build_app(device, SSE_KEEPALIVE=0.2)
    hub = app.extensions["arbiter_streams"]
    with live_server(app) as server:
        stream = SseClient(server.port)
        assert stream.wait(lambda s: len(s.events) >= 1, 10)
        assert hub.open_streams == 1
        stream.close()
        wait_for(lambda: hub.open_streams == 0, timeout=10)
        assert device._subscribers == []


def test_server_close_ends_open_streams(device: Any) -> None:
    app = build_app(device)
    with live_server(app) as server:
        streams = [SseClient(server.port) for _ in range(3)]
        for stream in streams:
            assert stream.wait(lambda s: len(s.events) >= 1, 10)
    # live_server closed the server: every stream has ended and unsubscribed
    for stream in streams:
        assert stream.wait(lambda s: s.closed, 10)
        stream.close()
    assert app.extensions["arbiter_streams"].open_streams == 0
    assert device._subscribers == []


def test_server_answers_with_more_streams_than_waitress_default(device: Any) -> None:
    with live_server(build_app(device)) as server:
        streams = [SseClient(server.port) for _ in range(8)]
        try:
            for stream in streams:
                assert stream.wait(lambda s: len(s.events) >= 1, 10)
            status, _, _ = http_get(server, "/api/status", timeout=5)
            assert status == 200
        finally:
            for stream in streams:
                stream.close()
