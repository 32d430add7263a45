"""web.kit.serve and the event stream over a real waitress server on loopback."""

from __future__ import annotations

import json
import socket
import threading
import urllib.request
from typing import Any

import pytest

from tests.support.waiting import wait_until
from tests.support.web import (
    SseClient,
    build_app,
    http_get,
    http_json,
    live_server,
)
from web.kit.body import MAX_BODY_BYTES
from web.kit.errors import WebServerError
from web.kit.serve import DEFAULT_THREADS, GrowingDispatcher, make_server

pytestmark = pytest.mark.timeout(60)


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


@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
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


@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
def test_events_stream_leaves_the_feed_when_client_goes(device: Any) -> None:
    """A closed page's stream leaves the feed; the device keeps one subscription, the
    feed's, however many pages come and go (dropped when the server stops)."""
    app = build_app(device, SSE_KEEPALIVE=0.2)
    hub = app.extensions["arbiter_streams"]
    with live_server(app) as server:
        streams = [SseClient(server.port) for _ in range(3)]
        for stream in streams:
            assert stream.wait(lambda s: len(s.events) >= 1, 10)
        assert hub.open_streams == 3 and hub.feed.subscribers == 3
        assert device._status_hub.subscriber_count == 1
        for stream in streams:
            stream.close()
        wait_until(lambda: hub.open_streams == 0, timeout=10)
        assert hub.feed.subscribers == 0
        assert device._status_hub.subscriber_count == 1
    assert device._status_hub.subscriber_count == 0


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
    assert device._status_hub.subscriber_count == 0


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


def _raw_put_head(port: int, length: int, first: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(
        (
            "PUT /api/sim/slots/attacker HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
        ).encode()
        + first
    )
    return sock


def _read_status(sock: socket.socket) -> int:
    data = b""
    while b"\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return int(data.split(b" ", 2)[1])


@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
def test_server_refuses_huge_body_before_reading_it(device: Any) -> None:
    with live_server(build_app(device)) as server:
        # 50 MB announced, 1 KB sent: the answer comes without the rest
        sock = _raw_put_head(server.port, 50 * 1024 * 1024, b"x" * 1024)
        try:
            assert _read_status(sock) == 413
        finally:
            sock.close()
        assert http_get(server, "/api/status")[0] == 200


def test_server_passes_body_at_the_limit_to_the_app(device: Any) -> None:
    body = b'{"piece": "' + b"x" * (MAX_BODY_BYTES - 13) + b'"}'
    assert len(body) == MAX_BODY_BYTES
    with live_server(build_app(device)) as server:
        sock = _raw_put_head(server.port, len(body), body)
        try:
            assert _read_status(sock) == 400  # read and judged by the app: not a piece
        finally:
            sock.close()


def _read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """Status, headers (lower-case names) and body of one answer the server closes after."""
    data = b""
    for _ in range(1000):  # bounded: the server closes after an error answer
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(lines[0].split(" ", 2)[1]), headers, body


def _assert_documented_json_error(code: int, headers: dict[str, str], body: bytes) -> None:
    from web.kit.hooks import SECURITY_HEADERS

    assert code == 413
    assert headers["content-type"].startswith("application/json")
    assert "too large" in json.loads(body)["error"]
    for name, value in SECURITY_HEADERS.items():
        assert headers.get(name.lower()) == value, name
    assert headers.get("cache-control") == "no-store"


def test_server_oversize_body_answers_json_with_security_headers(device: Any) -> None:
    with live_server(build_app(device)) as server:
        for announced in (MAX_BODY_BYTES + 1, 50 * 1024 * 1024):
            sock = _raw_put_head(server.port, announced, b"")
            try:
                _assert_documented_json_error(*_read_response(sock))
            finally:
                sock.close()


def test_server_oversize_chunked_body_answers_json(device: Any) -> None:
    with live_server(build_app(device)) as server:
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        try:
            # One chunk just over the limit, and nothing after it: the server has read
            # everything sent when it refuses, so its answer is not lost to a reset.
            chunk = b"x" * (MAX_BODY_BYTES + 1)
            sock.sendall(
                b"PUT /api/sim/slots/attacker HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                + b"%x\r\n" % len(chunk)
                + chunk
            )
            _assert_documented_json_error(*_read_response(sock))
        finally:
            sock.close()
        assert http_get(server, "/api/status")[0] == 200


def test_direct_write_refuses_a_client_that_stops_reading() -> None:
    """The one writer of every stream (the hub's venue feed) writes straight into each
    response; a client that stops reading gets StreamBacklogError once more than the
    limit waits unsent, so it is closed instead of filling the hub's memory."""
    import queue
    import threading

    from flask import Flask, Response, request

    from web.kit.errors import StreamBacklogError
    from web.kit.events import DIRECT_WRITE

    app = Flask(__name__)
    writers: queue.Queue[Any] = queue.Queue()
    release = threading.Event()

    @app.get("/stream")
    def stream() -> Response:
        direct = request.environ[DIRECT_WRITE]

        def body() -> Any:
            writers.put(direct)
            release.wait(30)  # the writer writes the body meanwhile
            yield from ()

        return Response(body(), mimetype="text/event-stream")

    limit, chunk = 256 * 1024, b"x" * 65536
    with live_server(app) as server:
        stalled = socket.create_connection(("127.0.0.1", server.port))
        try:
            stalled.sendall(b"GET /stream HTTP/1.1\r\nHost: t\r\n\r\n")
            direct = writers.get(timeout=10)
            direct.write(b"opening")  # the headers first, then chunks
            outcome: list[object] = []

            def write_until_refused() -> None:
                written = 0
                try:
                    for _ in range(800):  # 50 MB: past the sockets' buffers (36 MB here)
                        direct.write(chunk, limit=limit)
                        written += len(chunk)
                except StreamBacklogError as exc:
                    outcome.append(exc)
                outcome.append(written)

            # In a thread: without the limit, waitress makes the writer wait for the client.
            writer = threading.Thread(target=write_until_refused, daemon=True)
            writer.start()
            writer.join(20)
            assert not writer.is_alive(), "the writer was made to wait for a stalled client"
            refused, written = outcome
            assert isinstance(refused, StreamBacklogError)
            assert isinstance(written, int) and written > limit  # the buffers took some first
        finally:
            release.set()
            stalled.close()


class _Task:
    """A waitress task that records whether it was served or cancelled."""

    def __init__(self) -> None:
        self.served = threading.Event()
        self.cancelled = False

    def service(self) -> None:
        self.served.set()

    def cancel(self) -> None:
        self.cancelled = True


def test_serve_pool_takes_no_task_once_its_shutdown_began() -> None:
    """A task arriving during the shutdown (a stop signal while pages load) is cancelled:
    a thread started for it would outlive the shutdown and write to the closed trigger."""
    pool = GrowingDispatcher(initial=1, limit=4)
    before = _Task()
    pool.add_task(before)
    assert before.served.wait(5)
    assert pool.shutdown(timeout=5)
    late = _Task()
    pool.add_task(late)
    assert late.cancelled and not late.served.is_set()
    assert not pool.threads  # no thread started for it


def test_server_close_closes_the_sockets_from_the_loop_that_polls_them(device: Any) -> None:
    """Closed from another thread, a listening socket the loop had just found readable
    was accepted on after its close: EBADF and waitress's traceback (a stop-signal burst
    caught it). The loop must close its own sockets, then end."""
    server = make_server(build_app(device), "127.0.0.1", 0)
    closed_by: list[str] = []
    for each in list(server._map.values()):
        if hasattr(each, "channel_class"):  # a listening socket
            real_close = each.close

            def close(real_close: Any = real_close) -> None:
                closed_by.append(threading.current_thread().name)
                real_close()

            each.close = close
    loop = threading.Thread(target=server.run, name="test-serve-loop", daemon=True)
    loop.start()
    with urllib.request.urlopen(f"{server.url}api/status", timeout=10) as answer:
        assert answer.status == 200  # the loop is polling its sockets
    server.close()
    loop.join(timeout=10)
    assert not loop.is_alive()
    assert closed_by == ["test-serve-loop"]
