"""Serving an app on an asynchronous server: its event stream with no thread per viewer.

The hub's venue pages are followed live by every player and spectator (a thousand
phones at a 100-table event). :func:`make_async_server` serves the Flask app and
its event stream on one port with uvicorn (an ASGI server on asyncio, pure Python
with h11):

- the event stream (the app's :class:`web.kit.events.StreamRoute`) is an asyncio
  handler (:class:`web.kit.astream.StreamEndpoint`): an open stream is a socket and
  a buffer, no thread, so ``streams`` viewers (2,000 by default) each get every
  message from the feed's one writer; one more gets a quick 503 JSON and its page
  polls meanwhile;
- everything else is the Flask app, through a2wsgi's WSGI adapter, run in a bounded
  pool of :data:`WORKERS` declared threads (:class:`web.kit.workers.WorkerPool`);
- a connection that has not sent a whole request within ``request_timeout``
  seconds (idle, trickling, or silent after its answer) is closed
  (:class:`web.kit.ahttp.TimedH11Protocol`); a request the HTTP parser refuses (bad request
  line, headers too big) answers 400 JSON with the security headers, and one past
  the server's connection limit (``streams`` + :data:`SLOW_CONNECTIONS` + the
  workers) a quick 503 JSON, with them too; a body is
  read whole on the loop before a worker thread takes the request (a trickling
  client holds no thread), and one past :data:`web.kit.body.MAX_BODY_BYTES` is
  refused (413): by Flask from its ``Content-Length`` before it is read, or here
  once a chunked one grows past it.

::

    server = make_async_server(app, "0.0.0.0", 8088)
    BackgroundThread(lambda _s: server.run(), KIND, wake=server.close).start()
    ...
    server.close()   # ends the streams, stops the loop and the workers, closes the socket
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from typing import Any

from a2wsgi import WSGIMiddleware
from flask import Flask
from uvicorn import Config
from uvicorn import Server as UvicornServer

from web.kit.ahttp import REQUEST_TIMEOUT, answer_json, timed_protocol
from web.kit.astream import Receive, Scope, Send, StreamEndpoint
from web.kit.body import MAX_BODY_BYTES, body_limits
from web.kit.errors import WebServerError
from web.kit.events import StreamHub, StreamRoute
from web.kit.hooks import SECURITY_HEADERS
from web.kit.workers import WorkerPool

log = logging.getLogger(__name__)

#: Event streams open at once by default: each costs a socket and its buffers (about
#: 30 KB of the hub's memory), no thread; ten 100-table events' players and more.
DEFAULT_STREAMS = 2000
#: Threads running the Flask app's requests (pages, the JSON API, the organiser's).
WORKERS = 16
#: Connections beyond the streams: requests, idle and slow clients until timed out.
SLOW_CONNECTIONS = 250
#: Seconds the server waits for its responses to end when it stops.
SHUTDOWN_SECONDS = 3.0
#: Pending connections the listening socket holds (a crowd reconnecting at once).
BACKLOG = 2048


class Router:
    """The ASGI app: the event stream's path to its endpoint, the rest to Flask.

    A request's body is read whole on the loop before Flask's worker thread takes the
    request (as waitress did): a client trickling its body holds a socket until the
    request timeout, never one of the few worker threads. A body declared larger than
    its route's limit (:data:`web.kit.body.MAX_BODY_BYTES`, or the bigger one the app set
    for an import's path with :func:`web.kit.body.install_body_limits`) is answered 413
    unread, and so is one not declared (chunked) that grows past it.
    """

    def __init__(self, wsgi: Any, streams: StreamEndpoint | None,
                 limits: dict[str, int] | None = None) -> None:
        self._wsgi = wsgi
        self._streams = streams
        self._limits = limits or {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return  # no lifespan, no WebSocket (the server is told so)
        if self._streams is not None and scope["path"] == self._streams.route.path:
            await self._streams(scope, receive, send)
            return
        headers = dict(scope["headers"])
        declared = headers.get(b"content-length")
        limit = self._limits.get(scope["path"], MAX_BODY_BYTES)
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            # Refused unread, in the words waitress used (not Werkzeug's): one refusal
            # whichever server is in front.
            await answer_json(send, 413, "request entity too large: the body may hold"
                                          f" at most {limit} bytes")
            return
        if declared in (None, b"0") and b"chunked" not in headers.get(b"transfer-encoding", b""):
            await self._wsgi(scope, receive, send)  # no body
            return
        body = bytearray()
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the client left (or was timed out) before its body was whole
            body += message.get("body", b"")
            more = bool(message.get("more_body", False))
            if len(body) > limit:
                await answer_json(send, 413, "request entity too large: the body may hold"
                                              f" at most {limit} bytes")
                return
        whole: list[dict[str, Any]] = [{"type": "http.request", "body": bytes(body),
                                        "more_body": False}]

        async def replay() -> dict[str, Any]:
            return whole.pop() if whole else await receive()

        await self._wsgi(scope, replay, send)


class _Uvicorn(UvicornServer):
    """uvicorn's server, saying when its start-up is over (:meth:`run` may have begun well
    before the loop answers a request)."""

    def __init__(self, config: Config) -> None:
        super().__init__(config)
        self.settled = threading.Event()  # started, or given up
        self.loop: asyncio.AbstractEventLoop | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self.loop = asyncio.get_running_loop()
        try:
            await super().startup(sockets)
        finally:
            self.settled.set()


class AsyncWebServer:
    """A uvicorn server for one app; :meth:`close` also ends the open event streams."""

    def __init__(self, app: Flask, server: _Uvicorn, sock: socket.socket,
                 pool: WorkerPool) -> None:
        self.app = app
        self._server = server
        self._sock = sock
        self._pool = pool
        address = sock.getsockname()
        self.host: str = str(address[0])
        self.port: int = int(address[1])
        self._closed = False
        self._lock = threading.Lock()  # run's start against close
        self._running = threading.Event()
        self._finished = threading.Event()

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        if host == "::":
            host = "::1"
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}/"

    @property
    def connections(self) -> int:
        """Client connections open now (streams, requests, idle and slow ones)."""
        return len(self._server.server_state.connections)

    def wait_serving(self, timeout: float) -> bool:
        """Wait until the server answers requests (its loop runs on its socket): True,
        or False if it ended, was closed or did not start within ``timeout`` seconds."""
        if not self._server.settled.wait(timeout):
            return False
        return self._server.started and not self._finished.is_set() and not self._closed

    def turns(self, timeout: float) -> bool:
        """Whether the server's loop runs a call handed to it within ``timeout`` seconds
        (a loop stuck in one request answers no other; the hub's systemd watchdog asks)."""
        loop = self._server.loop
        if loop is None or self._finished.is_set():
            return False
        done = threading.Event()
        try:
            loop.call_soon_threadsafe(done.set)
        except RuntimeError:  # closed meanwhile
            return False
        return done.wait(timeout)

    def run(self) -> None:
        """Serve until :meth:`close` (blocks; run it in a thread)."""
        with self._lock:
            if self._closed:
                return
            self._running.set()
        try:
            self._server.run(sockets=[self._sock])
        except (OSError, ValueError):
            if not self._closed:  # a socket closed by a stop that came at once is expected
                raise
        finally:
            self._finished.set()
            self._server.settled.set()  # a run that ended before its start-up did

    def close(self) -> None:
        """End the streams, stop the loop and the workers, close the socket. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            running = self._running.is_set()
        self._server.settled.set()  # nobody waits for a start that will not come
        hub = self.app.extensions.get("arbiter_streams")
        if isinstance(hub, StreamHub):
            hub.stop()
        self._server.should_exit = True
        if running:
            self._finished.wait(SHUTDOWN_SECONDS + 5.0)
        self._sock.close()
        self._pool.shutdown()


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family, backlog=BACKLOG)
    except OSError as exc:
        raise WebServerError(f"cannot serve on {host}:{port}: {exc}") from None


def make_async_server(
    app: Flask,
    host: str,
    port: int,
    *,
    streams: int = DEFAULT_STREAMS,
    request_timeout: float = REQUEST_TIMEOUT,
    workers: int = WORKERS,
) -> AsyncWebServer:
    """Bind an asynchronous server for ``app`` on ``host``:``port`` (0 = any free port).

    ``streams`` event streams may be open at once (the app's stream hub is set to admit
    that many); ``request_timeout`` seconds is what a connection may take to send a
    whole request; ``workers`` threads run the Flask app's requests.

    :raises WebServerError: the address cannot be bound.
    :raises ValueError: ``streams`` or ``workers`` below 1, ``request_timeout`` not positive.
    """
    if streams < 1:
        raise ValueError(f"streams must be at least 1, not {streams}")
    protocol = timed_protocol(request_timeout)
    sock = _bind(host, port)
    pool = WorkerPool(workers)
    wsgi = WSGIMiddleware(app)  # type: ignore[arg-type]  # Flask is a WSGI app
    wsgi.executor = pool  # type: ignore[assignment]  # any Executor will do (run_in_executor)
    hub = app.extensions.get("arbiter_streams")
    route = app.extensions.get("arbiter_stream_route")
    endpoint = None
    if isinstance(hub, StreamHub) and isinstance(route, StreamRoute):
        hub.capacity = streams
        endpoint = StreamEndpoint(hub, route, pool, SECURITY_HEADERS)
    config = Config(
        Router(wsgi, endpoint, body_limits(app)), http=protocol, ws="none", lifespan="off",
        log_config=None, loop="asyncio",
        access_log=False, proxy_headers=False, server_header=False,
        headers=[("Server", "gg-arbiter")],
        timeout_keep_alive=int(max(1, request_timeout)),
        timeout_graceful_shutdown=int(SHUTDOWN_SECONDS),
        limit_concurrency=streams + SLOW_CONNECTIONS + workers,
    )
    # uvicorn's own lines (started, shutting down, waiting) are not the hub's news.
    logging.getLogger("uvicorn.error").setLevel(logging.WARNING)
    server = AsyncWebServer(app, _Uvicorn(config), sock, pool)
    everywhere = server.host in ("", "0.0.0.0", "::")
    log.info("web page on %s", f"every address, port {server.port} (on this machine: "
             f"{server.url})" if everywhere else server.url)
    return server
