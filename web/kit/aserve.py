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
  pool of :data:`WORKERS` declared threads (:class:`WorkerPool`);
- a connection that has not sent a whole request within ``request_timeout``
  seconds (idle, trickling, or silent after its answer) is closed
  (:class:`TimedH11Protocol`); a request the HTTP parser refuses (bad request
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
import json
import logging
import queue
import socket
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, ParamSpec, TypeVar

import h11
from a2wsgi import WSGIMiddleware
from flask import Flask
from uvicorn import Config
from uvicorn import Server as UvicornServer
from uvicorn.protocols.http.h11_impl import H11Protocol

from arbiter.logthrottle import LogThrottle
from arbiter.threads import BackgroundThread, declare
from web.kit.astream import TRANSPORT, Receive, Scope, Send, StreamEndpoint
from web.kit.body import MAX_BODY_BYTES, body_limits
from web.kit.errors import WebServerError
from web.kit.events import StreamHub, StreamRoute
from web.kit.hooks import SECURITY_HEADERS

WORKER = declare("web-worker", __name__,
                 "runs the Flask app's requests for the asynchronous server (a bounded pool)")

log = logging.getLogger(__name__)

#: Event streams open at once by default: each costs a socket and its buffers (about
#: 30 KB of the hub's memory), no thread; ten 100-table events' players and more.
DEFAULT_STREAMS = 2000
#: Threads running the Flask app's requests (pages, the JSON API, the organiser's).
WORKERS = 16
#: Connections beyond the streams: requests, idle and slow clients until timed out.
SLOW_CONNECTIONS = 250
#: Seconds a connection may take to send a whole request (or stay idle between two).
REQUEST_TIMEOUT = 10.0
#: Seconds the server waits for its responses to end when it stops.
SHUTDOWN_SECONDS = 3.0
#: Pending connections the listening socket holds (a crowd reconnecting at once).
BACKLOG = 2048
#: Seconds a client refused past the connection limit is asked to wait (Retry-After).
BUSY_RETRY_AFTER = 5
#: The refusal past the connection limit (uvicorn's own says "Service Unavailable", as text).
BUSY = "busy: too many connections to this server at once; try again in a few seconds"

_P = ParamSpec("_P")
_T = TypeVar("_T")


class WorkerPool(Executor):
    """A fixed pool of declared threads (:data:`WORKER`) running calls in their order."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self._queue: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]] | None] = (
            queue.SimpleQueue())
        self._closed = False
        self._threads = [BackgroundThread(self._work, WORKER, label=f"web-worker-{n}")
                         for n in range(workers)]
        for thread in self._threads:
            thread.start()

    def submit(self, fn: Callable[_P, _T], /, *args: _P.args,
               **kwargs: _P.kwargs) -> Future[_T]:
        if self._closed:
            raise RuntimeError("the worker pool is shut down")
        future: Future[_T] = Future()
        self._queue.put((future, lambda: fn(*args, **kwargs)))
        return future

    def _work(self, stopping: threading.Event) -> None:
        while not stopping.is_set():
            item = self._queue.get()
            if item is None:
                return
            future, call = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = call()
            except BaseException as exc:  # handed to whoever waits for it
                future.set_exception(exc)
            else:
                future.set_result(result)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._closed = True
        for _thread in self._threads:  # every thread told first, then each waited for
            self._queue.put(None)
        for thread in self._threads:
            thread.stop(5.0 if wait else 0.0)


class _QuietParserWarnings(logging.Filter):
    """uvicorn warns of every request its parser refuses: a rogue client could fill the
    log; :meth:`TimedH11Protocol.send_400_response` says it at debug level instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != "Invalid HTTP request received."


_UVICORN_LOG = logging.getLogger(f"{__name__}.uvicorn")
_UVICORN_LOG.addFilter(_QuietParserWarnings())


_BUSY_LOG = LogThrottle()


class TimedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 connection, closed when it has not sent a whole request within
    ``request_timeout`` seconds (from its opening, and again after each answer: a
    trickling client is closed too, whose every byte would restart uvicorn's own idle
    timer); its parser's refusals, and its refusals past the connection limit (the
    config's ``limit_concurrency``, checked here instead of by uvicorn, whose 503 is
    plain text), answer JSON with the security headers; and it offers the app its
    transport (:data:`web.kit.astream.TRANSPORT`), which an event stream writes its body
    to from the loop, with no task woken per message."""

    request_timeout = REQUEST_TIMEOUT

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.logger = _UVICORN_LOG
        inner = self.app
        self._deadline: asyncio.TimerHandle | None = None
        # uvicorn would answer past the limit before the app, in text: the app does it.
        limit, self.limit_concurrency = self.limit_concurrency, None

        async def app(scope: Scope, receive: Receive, send: Send) -> None:
            # uvicorn's own test, counted as it counts (this request's task is in
            # ``tasks`` by now, not yet when uvicorn looks).
            if limit is not None and (len(self.connections) >= limit
                                      or len(self.tasks) > limit):
                if (line := _BUSY_LOG.note("busy")) is not None:
                    log.warning("refused a request past the limit of %d connections (%d "
                                "times so far, %d lines held back)", limit, *line)
                await _answer_json(send, 503, BUSY,
                                   [(b"retry-after", str(BUSY_RETRY_AFTER).encode())])
                return
            scope["extensions"] = {**(scope.get("extensions") or {}), TRANSPORT: self.transport}
            await inner(scope, receive, send)

        self.app = app

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def _arm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = self.loop.call_later(self.request_timeout, self._expired)

    def _expired(self) -> None:
        if self.transport.is_closing() or self.conn.their_state not in (h11.IDLE, h11.SEND_BODY):
            return  # a whole request is being answered (an open stream among them)
        log.debug("closing %s: no whole request in %.1f s", self.client, self.request_timeout)
        self.transport.close()

    def send_400_response(self, msg: str) -> None:
        log.debug("refused a request from %s: %s", self.client, msg)
        body = json.dumps({"error": "bad request: the request could not be read as HTTP"})
        headers = [(b"content-type", b"application/json"), (b"cache-control", b"no-store"),
                   (b"connection", b"close"),
                   *((k.encode(), v.encode()) for k, v in SECURITY_HEADERS.items())]
        try:
            for event in (h11.Response(status_code=400, headers=headers, reason=b"Bad Request"),
                          h11.Data(data=body.encode()), h11.EndOfMessage()):
                self.transport.write(self.conn.send(event))
        except h11.LocalProtocolError:  # an answer had begun already: just close
            pass
        self.transport.close()


def timed_protocol(request_timeout: float) -> type[TimedH11Protocol]:
    """A :class:`TimedH11Protocol` class with ``request_timeout`` seconds."""
    if request_timeout <= 0:
        raise ValueError(f"request_timeout must be positive, not {request_timeout}")
    return type("TimedH11Protocol", (TimedH11Protocol,), {"request_timeout": request_timeout})


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
            await _answer_json(send, 413, "request entity too large: the body may hold"
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
                await _answer_json(send, 413, "request entity too large: the body may hold"
                                              f" at most {limit} bytes")
                return
        whole: list[dict[str, Any]] = [{"type": "http.request", "body": bytes(body),
                                        "more_body": False}]

        async def replay() -> dict[str, Any]:
            return whole.pop() if whole else await receive()

        await self._wsgi(scope, replay, send)


async def _answer_json(send: Send, status: int, error: str,
                       extra: list[tuple[bytes, bytes]] | None = None) -> None:
    raw = json.dumps({"error": error}).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"cache-control", b"no-store"),
        (b"content-length", str(len(raw)).encode()), (b"connection", b"close"),
        *((k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()),
        *(extra or [])]})
    await send({"type": "http.response.body", "body": raw, "more_body": False})


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
