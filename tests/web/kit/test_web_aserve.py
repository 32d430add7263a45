"""The asynchronous server (web.kit.aserve, .ahttp, .workers, .astream): streams with
no thread per viewer, their places given back when a client goes, and the limits waitress kept
(request timeouts, JSON refusals with the security headers, body limit, clean stop).

Real sockets against the real server, on a small app whose feed is the kit's one
writer (:class:`web.kit.broadcast.Broadcast`)."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

import pytest
from flask import Flask, jsonify, request

from arbiter import threads
from tests.support.crowd import close_all, hold_streams
from tests.support.sse import streams_showing
from tests.support.waiting import wait_until
from web.kit.aserve import SLOW_CONNECTIONS, AsyncWebServer, make_async_server
from web.kit.astream import LoopStream, Pump
from web.kit.body import MAX_BODY_BYTES
from web.kit.broadcast import Broadcast, Member
from web.kit.errors import StreamBacklogError, StreamGoneError, WebServerError
from web.kit.events import StreamHub, StreamRoute
from web.kit.hooks import SECURITY_HEADERS
from web.kit.workers import WorkerPool

pytestmark = pytest.mark.timeout(180)

RUNNER = threads.declare("test-aserve", __name__, "runs the asynchronous server in a test")
STREAM = StreamRoute("/api/events", "/api/status", 7)


class Ticker:
    """A feed as the apps' feeds are: one writer (the caller of :meth:`publish`)."""

    def __init__(self) -> None:
        self.broadcast = Broadcast(keepalive=60.0)

    def join(self, member: Member, last_event_id: str | None = None) -> None:
        self.broadcast.join(member, b": ticker\nretry: 2000\n\ndata: {\"n\":0}\n\n")

    def leave(self, member: Member) -> None:
        self.broadcast.leave(member)

    def keepalive_due(self) -> None:
        self.broadcast.keepalive_due()

    def close_streams(self) -> None:
        self.broadcast.close_streams()

    def publish(self, n: int, pad: int = 0) -> None:
        body = json.dumps({"n": n, "pad": "x" * pad})
        self.broadcast.deliver(f"data: {body}\n\n".encode())


def _app(feed: Ticker) -> Flask:
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY_BYTES
    app.extensions["arbiter_streams"] = StreamHub(feed, 60.0)
    app.extensions["arbiter_stream_route"] = STREAM

    @app.get("/api/status")
    def status() -> Any:
        return jsonify({"ok": True})

    @app.post("/api/echo")
    def echo() -> Any:
        return jsonify({"length": len(request.get_data())})

    @app.after_request
    def headers(response: Any) -> Any:
        response.headers.update(SECURITY_HEADERS)
        return response

    return app


@contextmanager
def serving(app: Flask, **kwargs: Any) -> Iterator[AsyncWebServer]:
    server = make_async_server(app, "127.0.0.1", 0, **kwargs)
    thread = threads.BackgroundThread(lambda _s: server.run(), RUNNER, wake=server.close)
    thread.start()
    try:
        wait_until(lambda: _connects(server.port))
        yield server
    finally:
        thread.stop(15.0)
        server.close()


def _connects(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def _request(port: int, raw: bytes, timeout: float = 10.0) -> tuple[str, dict[str, str], bytes]:
    """Send ``raw``, read one whole answer (closed by the server or of Content-Length)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(raw)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in
                   (line.partition(":") for line in lines[1:])}
        length = int(headers.get("content-length", "-1"))
        while length < 0 or len(body) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
        return lines[0], headers, body


def _stream_request() -> bytes:
    return f"GET {STREAM.path} HTTP/1.1\r\nHost: t\r\n\r\n".encode()


@pytest.mark.slow  # seconds of real time
def test_a_thousand_streams_closed_give_their_places_back_at_once() -> None:
    """Issue 27, item 7: 200 streams opened and closed kept new viewers out for 10.8 s
    (until each stream's next write). Here the places are exactly 1,000, the feed
    writes nothing (keep-alive a minute away), and every place must be back within a
    second of the last close, so that a new viewer is served."""
    feed = Ticker()
    app = _app(feed)
    hub: StreamHub = app.extensions["arbiter_streams"]
    with serving(app, streams=1000) as server:
        socks = hold_streams(server.port, 1000, timeout=120)
        assert hub.admitted == 1000
        refused, _headers, _body = _request(server.port, _stream_request())
        assert " 503 " in refused
        close_all(socks)
        closed = time.monotonic()
        wait_until(lambda: hub.admitted == 0, timeout=5.0)
        freed = time.monotonic() - closed
        viewer = hold_streams(server.port, 1, timeout=10)
        close_all(viewer)
    assert freed <= 1.0, f"1,000 places came back {freed:.2f} s after the clients closed"


@pytest.mark.slow  # seconds of real time
def test_a_thousand_viewers_each_get_every_update() -> None:
    feed = Ticker()
    app = _app(feed)
    with serving(app) as server:
        socks = hold_streams(server.port, 1000, timeout=120)
        try:
            assert app.extensions["arbiter_streams"].open_streams == 1000
            for n in range(1, 6):
                feed.publish(n)
            assert streams_showing(socks, b'{"n": 5, "pad": ""}', 60) == 1000
        finally:
            close_all(socks)


def test_past_capacity_a_quick_503_json_naming_the_poll() -> None:
    feed = Ticker()
    with serving(_app(feed), streams=2) as server:
        socks = hold_streams(server.port, 2)
        try:
            started = time.monotonic()
            status, headers, body = _request(server.port, _stream_request())
            took = time.monotonic() - started
        finally:
            close_all(socks)
    assert " 503 " in status and took < 5
    assert headers["content-type"] == "application/json"
    assert headers["retry-after"] == "7" and headers["cache-control"] == "no-store"
    assert "/api/status" in json.loads(body)["error"]
    for name, value in SECURITY_HEADERS.items():
        assert headers[name.lower()] == value, name


def test_the_stream_carries_the_security_headers_and_every_message() -> None:
    feed = Ticker()
    with serving(_app(feed)) as server:
        socks = hold_streams(server.port, 3)
        try:
            for n in range(1, 4):
                feed.publish(n)
            assert streams_showing(socks, b'{"n": 3, "pad": ""}', 20) == 3
        finally:
            close_all(socks)
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            sock.sendall(_stream_request())
            head = b""
            while b"\r\n\r\n" not in head:
                head += sock.recv(4096)
    text = head.decode("latin-1").lower()
    assert text.startswith("http/1.1 200") and "content-type: text/event-stream" in text
    for name, value in SECURITY_HEADERS.items():
        assert f"{name.lower()}: {value.lower()}" in text, name


def test_a_viewer_that_stops_reading_is_closed_and_the_others_still_served() -> None:
    feed = Ticker()
    app = _app(feed)
    hub: StreamHub = app.extensions["arbiter_streams"]
    with serving(app) as server:
        stalled = socket.socket()
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.connect(("127.0.0.1", server.port))
        stalled.sendall(_stream_request())
        readers = hold_streams(server.port, 2)
        wait_until(lambda: hub.open_streams == 3)
        try:
            for n in range(1, 200):  # 10 MB to each: far past the backlog a viewer may hold
                feed.publish(n, pad=50_000)
                if hub.open_streams == 2:
                    break
                streams_showing(readers, f'{{"n": {n}, '.encode(), 20)
            assert hub.open_streams == 2, "the stalled viewer was never dropped"
            feed.publish(1000)
            assert streams_showing(readers, b'{"n": 1000, "pad": ""}', 20) == 2
        finally:
            close_all([*readers, stalled])


def test_idle_and_trickling_connections_are_closed_after_the_request_timeout() -> None:
    with serving(_app(Ticker()), request_timeout=0.5) as server:
        idle = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        trickle = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        started = time.monotonic()
        closed_after: list[float] = []
        for byte in b"GET /api/status HTTP/1.1\r\nHost: t\r\n":  # never the last CRLF
            try:
                trickle.sendall(bytes([byte]))
            except OSError:
                break
            if not _open(trickle):
                break
            time.sleep(0.05)  # the client's trickle, the thing under test
        for sock in (idle, trickle):
            sock.settimeout(10)
            assert sock.recv(4096) == b"", "the server kept a connection with no request"
            closed_after.append(time.monotonic() - started)
            sock.close()
    assert max(closed_after) < 5.0


def _open(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        sock.setblocking(True)


def test_an_open_stream_is_never_timed_out() -> None:
    feed = Ticker()
    app = _app(feed)
    with serving(app, request_timeout=0.3) as server:
        socks = hold_streams(server.port, 1)
        try:
            time.sleep(1.0)  # three request timeouts of real time, the thing under test
            feed.publish(1)
            assert streams_showing(socks, b'{"n": 1, "pad": ""}', 10) == 1
        finally:
            close_all(socks)


def test_a_bad_request_answers_400_json_with_the_security_headers() -> None:
    with serving(_app(Ticker())) as server:
        status, headers, body = _request(server.port, b"NOT HTTP AT ALL\r\n\r\n")
    assert " 400 " in status
    assert headers["content-type"] == "application/json"
    assert "bad request" in json.loads(body)["error"]
    for name, value in SECURITY_HEADERS.items():
        assert headers[name.lower()] == value, name


def test_past_the_connection_limit_a_quick_503_json_with_the_security_headers() -> None:
    """The server holds ``streams`` + SLOW_CONNECTIONS + ``workers`` connections (uvicorn
    counts the one asking among them): with that many open, one more request is refused
    at once in JSON, as every other refusal; once they close, it is served."""
    limit = 1 + SLOW_CONNECTIONS + 1
    with serving(_app(Ticker()), streams=1, workers=1, request_timeout=60.0) as server:
        idle = [socket.create_connection(("127.0.0.1", server.port), timeout=10)
                for _ in range(limit - 1)]
        try:
            wait_until(lambda: server.connections == limit - 1, timeout=20.0)
            started = time.monotonic()
            status, headers, body = _request(server.port, b"GET /api/status HTTP/1.1\r\n"
                                                          b"Host: t\r\n\r\n")
            took = time.monotonic() - started
        finally:
            close_all(idle)
        wait_until(lambda: server.connections == 0, timeout=20.0)
        served, _h, answer = _request(server.port, b"GET /api/status HTTP/1.1\r\nHost: t\r\n"
                                                   b"Connection: close\r\n\r\n")
    assert " 503 " in status and took < 5
    assert headers["content-type"] == "application/json"
    assert headers["cache-control"] == "no-store" and headers["retry-after"] == "5"
    assert "too many connections" in json.loads(body)["error"]
    for name, value in SECURITY_HEADERS.items():
        assert headers[name.lower()] == value, name
    assert " 200 " in served and json.loads(answer) == {"ok": True}


def test_the_server_says_whether_its_loop_turns() -> None:
    """What the hub's systemd watchdog asks: a loop stuck in one call (here held on an event
    the test sets) does not turn; once free it does, and a closed server does not."""
    app = _app(Ticker())
    idle = make_async_server(app, "127.0.0.1", 0)
    try:
        assert not idle.turns(0.1)  # not running yet
    finally:
        idle.close()
    with serving(app) as server:
        assert server.wait_serving(10.0) and server.turns(5.0)
        loop = server._server.loop
        assert loop is not None
        gate = threading.Event()
        loop.call_soon_threadsafe(gate.wait, 30.0)
        try:
            assert not server.turns(0.3)
        finally:
            gate.set()
        assert server.turns(5.0)
    assert not server.turns(0.1)


def test_a_body_past_the_limit_is_refused_and_one_at_the_limit_taken() -> None:
    with serving(_app(Ticker())) as server:
        big = MAX_BODY_BYTES + 1
        status, _h, _b = _request(server.port, (
            f"POST /api/echo HTTP/1.1\r\nHost: t\r\nContent-Length: {big}\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode())
        assert " 413 " in status
        status, _h, body = _request(server.port, (
            f"POST /api/echo HTTP/1.1\r\nHost: t\r\nContent-Length: {MAX_BODY_BYTES}\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode() + b"a" * MAX_BODY_BYTES)
        assert " 200 " in status and json.loads(body) == {"length": MAX_BODY_BYTES}


def test_a_chunked_body_past_the_limit_is_refused_as_json() -> None:
    with serving(_app(Ticker())) as server:
        chunk = b"a" * 4096
        body = b"".join(b"%X\r\n%s\r\n" % (len(chunk), chunk)
                        for _ in range(MAX_BODY_BYTES // len(chunk) + 2)) + b"0\r\n\r\n"
        status, headers, raw = _request(server.port, (
            b"POST /api/echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n"
            b"Content-Type: application/octet-stream\r\n\r\n") + body)
    assert " 413 " in status and headers["content-type"] == "application/json"
    assert str(MAX_BODY_BYTES) in json.loads(raw)["error"]
    for name, value in SECURITY_HEADERS.items():
        assert headers[name.lower()] == value, name


def test_clients_trickling_their_bodies_hold_no_worker_thread() -> None:
    """Six clients send a body's first byte and no more; with two worker threads, a page
    is still answered at once (waitress too read bodies before a thread took them)."""
    with serving(_app(Ticker()), workers=2, request_timeout=60) as server:
        tricklers = []
        for _ in range(6):
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
            sock.sendall(b"POST /api/echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n"
                         b"Content-Type: application/octet-stream\r\n\r\nx")
            tricklers.append(sock)
        try:
            started = time.monotonic()
            status, _h, body = _request(server.port, b"GET /api/status HTTP/1.1\r\nHost: t\r\n"
                                                     b"Connection: close\r\n\r\n", timeout=30)
            took = time.monotonic() - started
        finally:
            close_all(tricklers)
    assert " 200 " in status and json.loads(body) == {"ok": True}
    assert took < 5, f"a page waited {took:.1f} s behind clients trickling their bodies"


def test_close_ends_the_streams_and_leaves_no_thread() -> None:
    feed = Ticker()
    app = _app(feed)
    server = make_async_server(app, "127.0.0.1", 0, workers=3)
    runner = threads.BackgroundThread(lambda _s: server.run(), RUNNER, wake=server.close)
    runner.start()
    wait_until(lambda: _connects(server.port))
    socks = hold_streams(server.port, 2)
    try:
        runner.stop(15.0)
        for sock in socks:
            sock.setblocking(True)
            sock.settimeout(10)
            while sock.recv(65536):
                pass  # what was under way, then the end
    finally:
        close_all(socks)
    assert not runner.is_alive()
    assert not [t for t in threading.enumerate() if t.name.startswith("web-worker")]
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", server.port), timeout=2).close()


def test_a_port_in_use_is_a_clear_error_and_leaves_no_thread() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        with pytest.raises(WebServerError, match=f"cannot serve on 127.0.0.1:{port}"):
            make_async_server(_app(Ticker()), "127.0.0.1", port)
    assert not [t for t in threading.enumerate() if t.name.startswith("web-worker")]


def test_viewers_coming_and_going_are_logged_at_debug_only(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    feed = Ticker()
    app = _app(feed)
    with serving(app, streams=1) as server:
        socks = hold_streams(server.port, 1)
        _request(server.port, _stream_request())  # refused: full
        close_all(socks)
        wait_until(lambda: app.extensions["arbiter_streams"].admitted == 0)
    mine = [r for r in caplog.records if r.name.startswith(("web.", "uvicorn"))]
    assert any("left the stream" in r.getMessage() for r in mine)
    assert any("refused" in r.getMessage() for r in mine)
    assert [r.getMessage() for r in mine if r.levelno >= logging.INFO
            and "web page on" not in r.getMessage()] == []


def test_loop_stream_frames_its_bytes_and_aborts_a_client_that_stops_reading() -> None:
    """A real socket pair: what the writer writes arrives chunk-framed; once the peer
    has left more than the limit unread, the next write raises and the connection is
    aborted (the viewer reconnects; the others are not held up)."""

    async def scenario() -> tuple[bytes, int, bool]:
        loop = asyncio.get_running_loop()
        ours, theirs = socket.socketpair()
        theirs.setblocking(False)
        transport, _protocol = await loop.create_connection(asyncio.Protocol, sock=ours)
        stream = LoopStream(Pump(loop), transport, limit=64 * 1024)
        writer = threading.Thread(target=stream.write, args=(b"data: 1\n\n",))
        writer.start()  # from another thread, as the feed's writer does
        writer.join()
        got = b""
        while b"\r\n" not in got[3:]:
            await asyncio.sleep(0.01)
            with suppress(BlockingIOError):
                got += theirs.recv(100)
        written = 0
        # Refused for its backlog, or found aborted by the loop's flush: dropped either way.
        with pytest.raises((StreamBacklogError, StreamGoneError)):
            for _ in range(100_000):  # the peer reads no more
                stream.write(b"x" * 4096)
                written += 1
                await asyncio.sleep(0)  # the loop flushes
        await asyncio.wait_for(stream.ended.wait(), 5)
        theirs.close()
        return got, written, transport.is_closing()

    got, written, closed = asyncio.run(scenario())
    assert got == b"9\r\ndata: 1\n\n\r\n"
    assert 0 < written < 100_000 and closed


def test_worker_pool_runs_calls_and_stops_its_threads() -> None:
    pool = WorkerPool(4)
    try:
        futures = [pool.submit(pow, 2, n) for n in range(20)]
        assert [f.result(10) for f in futures] == [2 ** n for n in range(20)]
        failing = pool.submit(int, "not a number")
        with pytest.raises(ValueError):
            failing.result(10)
    finally:
        pool.shutdown()
    assert not [t for t in threading.enumerate() if t.name.startswith("web-worker")]
    with pytest.raises(RuntimeError):
        pool.submit(pow, 2, 2)
