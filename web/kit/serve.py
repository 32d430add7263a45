"""Serving the app with waitress, with a bounded pool of event streams.

Every open Server-Sent Events stream holds one waitress worker thread for as
long as the page is open. So that a crowd cannot take the page down:

- the pool has ``streams`` threads for streams plus :data:`SPARE_THREADS` that
  no stream may take, and the app's stream hub admits only ``streams`` streams
  (one more gets a quick 503 and the page polls ``/api/status`` instead); it
  starts with the spare threads only and grows as requests find none idle,
  so start-up does not wait for 200 threads nobody may need;
- a connection that has not sent a whole request within ``request_timeout``
  seconds (an idle keep-alive, a client that trickles its request or sends
  nothing) is closed, so idle and slow clients never fill the server;
- the connection limit leaves room for :data:`SLOW_CONNECTIONS` such clients
  beside the streams and the ordinary requests.

::

    server = make_server(app, "0.0.0.0", 8080)
    threading.Thread(target=server.run, daemon=True).start()
    ...
    server.close()   # ends the streams, stops the workers, closes the sockets
"""

from __future__ import annotations

import copy
import json
import logging
import threading
import time
from collections.abc import Mapping
from typing import Any, ClassVar

from flask import Flask
from waitress import trigger, wasyncore
from waitress.channel import ClientDisconnected, HTTPChannel
from waitress.parser import HTTPRequestParser
from waitress.server import create_server
from waitress.task import ErrorTask, ThreadedTaskDispatcher, WSGITask

from web.kit.body import MAX_BODY_BYTES, body_limits
from web.kit.errors import StreamBacklogError, WebServerError
from web.kit.events import DIRECT_WRITE, STREAM_CAPACITY, StreamHub

log = logging.getLogger(__name__)

#: Event streams open at once: 200 viewers, ten times the product's target of 20.
DEFAULT_STREAMS = STREAM_CAPACITY
#: Threads no stream may take: the status API, pages, admin and simulator requests.
SPARE_THREADS = 16
#: Connections beyond the streams and the spare threads' requests, room for idle
#: and slow clients until ``request_timeout`` closes them.
SLOW_CONNECTIONS = 250
#: Bytes a stream's sent output may hold before waitress starts a fresh buffer.
OUTBUF_HIGH_WATERMARK = 256 * 1024
#: Seconds a connection may take to send a whole request (or stay idle between two).
REQUEST_TIMEOUT = 10.0
DEFAULT_THREADS = DEFAULT_STREAMS + SPARE_THREADS


class JsonErrorTask(ErrorTask):  # type: ignore[misc]  # waitress has no type hints
    """Waitress's own refusals (body too large, bad request line, headers too
    big), which never reach Flask, in the API's documented form: JSON
    ``{"error": ...}`` with the app's security headers."""

    def execute(self) -> None:
        from web.kit.hooks import SECURITY_HEADERS

        error = self.request.error
        detail = str(error.body).strip()
        message = f"{error.reason.lower()}: {detail}" if detail else error.reason.lower()
        body = json.dumps({"error": message}).encode("utf-8")
        self.status = f"{error.code} {error.reason}"
        self.response_headers.append(("Content-Type", "application/json"))
        self.response_headers.append(("Cache-Control", "no-store"))
        self.response_headers.extend(SECURITY_HEADERS.items())
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class TaskWriter:
    """A :class:`web.kit.events.DirectWrite` over one waitress response: the bytes go
    through the task's own ``write`` (its headers first, its chunked framing) into
    the connection's output buffer, which waitress sends without blocking; so one
    thread can write many streams while their request threads wait."""

    def __init__(self, task: WSGITask) -> None:
        self._task = task
        self._channel = task.channel

    def write(self, data: bytes, limit: int | None = None) -> None:
        """Raises waitress's ClientDisconnected once the client has gone, and
        StreamBacklogError when more than ``limit`` bytes wait unsent."""
        task = self._task
        if not (task.wrote_header and task.chunked_response and data):
            task.write(data)  # the headers first, or a response that is not chunked
            return
        # What task.write does once the headers are out, made cheap: this runs for every
        # stream at every message. With nothing waiting in the connection's buffer the
        # chunk goes straight to the (non-blocking) socket, under the buffer's lock so
        # the server's loop is not sending meanwhile; what the socket does not take
        # waits in waitress's buffer as usual.
        framed = b"%X\r\n%s\r\n" % (len(data), data)
        channel = self._channel
        with channel.outbuf_lock:
            if not channel.connected:
                raise ClientDisconnected
            waiting = channel.total_outbufs_len
            if limit is not None and waiting > limit:
                raise StreamBacklogError(f"{waiting} bytes unsent: the client stopped reading")
            if not waiting:
                try:
                    sent = channel.socket.send(framed)
                except BlockingIOError:
                    sent = 0
                except OSError:
                    sent = 0  # write_soon meets the error again and closes the connection
                if sent == len(framed):
                    return
                framed = framed[sent:]
        channel.write_soon(framed)


class DirectWriteTask(WSGITask):  # type: ignore[misc]
    """Waitress's WSGI task, offering the app a :class:`TaskWriter` in the environ."""

    def get_environment(self) -> dict[str, Any]:
        environ: dict[str, Any] = super().get_environment()
        environ[DIRECT_WRITE] = TaskWriter(self)
        return environ


class JsonErrorChannel(HTTPChannel):  # type: ignore[misc]
    """A waitress connection whose own error answers are :class:`JsonErrorTask`."""

    error_task_class = JsonErrorTask
    task_class = DirectWriteTask


class GrowingDispatcher(ThreadedTaskDispatcher):  # type: ignore[misc]
    """Waitress's worker pool, started with ``initial`` threads and grown to ``limit``.

    A task that finds no idle thread starts one more (up to ``limit``), so it
    never waits behind open streams; threads are kept once started. Once
    :meth:`shutdown` has begun, a new task is cancelled: a thread started then
    would outlive the shutdown and write to the server's closed trigger (EBADF,
    seen when a stop signal came while pages were loading).
    """

    def __init__(self, initial: int, limit: int) -> None:
        super().__init__()
        self.limit = limit
        self._closing = False
        self.set_thread_count(min(initial, limit))

    def shutdown(self, cancel_pending: bool = True, timeout: float = 5) -> bool:
        with self.lock:
            self._closing = True
        return bool(super().shutdown(cancel_pending, timeout))

    def add_task(self, task: Any) -> None:
        with self.lock:
            if self._closing:
                task.cancel()
                return
            running = len(self.threads) - self.stop_count
            idle = running - self.active_count
            if len(self.queue) >= idle and running < self.limit:
                # Under the lock (as set_thread_count does it), so two tasks
                # arriving together from two threads each get their thread.
                thread_no = 0
                while thread_no in self.threads:
                    thread_no += 1
                self.threads.add(thread_no)
                self.start_new_thread(self.handler_thread, thread_no)
                self.active_count += 1  # it counts itself idle when it first waits
            self.queue.append(task)
            self.queue_cv.notify()


class TimedChannel(JsonErrorChannel):
    """A connection closed when it has not sent a whole request in ``request_timeout``.

    The clock runs while the connection has no request being served: from
    its opening, and again after each answer. A trickling or silent client
    thus holds only a socket, for a bounded time, never a worker thread; an
    open event stream is a request being served and is never timed out.
    (Waitress's own ``channel_timeout`` counts from the last byte received,
    so a client sending one byte a second is never closed by it.)
    """

    request_timeout = REQUEST_TIMEOUT
    will_close: bool  # waitress's flag (no type hints there): close once flushed
    requests: list[Any]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._waiting_since: float | None = time.monotonic()

    def readable(self) -> bool:
        # The server's loop asks every channel this at least once a second
        # (asyncore_loop_timeout), which makes it the place to check the clock.
        if self.requests:
            self._waiting_since = None
        elif self._waiting_since is None:
            self._waiting_since = time.monotonic()
        elif time.monotonic() - self._waiting_since > self.request_timeout:
            if not self.will_close:
                log.debug("closing %s: no whole request in %.1f s", self.addr,
                          self.request_timeout)
            # writable() is now true, and handle_write closes the connection
            self.will_close = True
        return bool(super().readable())


class RouteLimitParser(HTTPRequestParser):  # type: ignore[misc]
    """Waitress's request parser, refusing a body past ``limits``' bytes for their paths
    (an event's file to import) and past max_request_body_size for every other."""

    limits: ClassVar[Mapping[str, int]] = {}
    adj: Any  # waitress's Adjustments (no type hints there)
    path: str

    def parse_header(self, header_plus: bytes) -> None:
        super().parse_header(header_plus)
        limit = self.limits.get(self.path)
        if limit is not None:  # waitress refuses a body of its limit or more
            adj: Any = copy.copy(self.adj)
            adj.max_request_body_size = limit + 1
            self.adj = adj


def timed_channel(request_timeout: float) -> type[TimedChannel]:
    """A :class:`TimedChannel` class with ``request_timeout`` seconds."""
    if request_timeout <= 0:
        raise ValueError(f"request_timeout must be positive, not {request_timeout}")
    return type("TimedChannel", (TimedChannel,), {"request_timeout": request_timeout})


class WebServer:
    """A waitress server whose :meth:`close` also ends the open event streams."""

    def __init__(self, app: Flask, inner: Any, socket_map: dict[int, Any]) -> None:
        self.app = app
        self._inner = inner
        self._map = socket_map
        if hasattr(inner, "effective_port"):
            self.host: str = str(inner.effective_host)
            self.port: int = int(inner.effective_port)
        else:  # several listening sockets (a name resolving to IPv4 and IPv6)
            self.host, self.port = (
                str(inner.effective_listen[0][0]),
                int(inner.effective_listen[0][1]),
            )
        self._closed = False
        self._looping = threading.Event()  # run() is in the loop
        self._loop_done = threading.Event()  # ...and has left it

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}/"

    @property
    def connections(self) -> int:
        """Client connections open now (streams, requests, idle and slow ones)."""
        return sum(1 for each in list(self._map.values()) if isinstance(each, HTTPChannel))

    def run(self) -> None:
        """Serve until :meth:`close` (blocks; run it in a thread)."""
        self._looping.set()
        try:
            self._inner.run()
        except (OSError, ValueError):
            if not self._closed:  # a closed socket's last poll is expected noise
                raise
        finally:
            self._loop_done.set()

    def _trigger(self) -> Any:
        """The loop's wake-up (each listening server has one on the shared map)."""
        for each in list(self._map.values()):
            if isinstance(each, trigger.trigger):
                return each
        return None

    def close(self) -> None:
        """End the streams, stop the worker threads, close every socket. Idempotent."""
        if self._closed:
            return
        self._closed = True
        hub = self.app.extensions.get("arbiter_streams")
        if isinstance(hub, StreamHub):
            hub.stop()
        self._inner.task_dispatcher.shutdown(timeout=5)
        if self._looping.is_set() and not self._loop_done.is_set():
            # The loop closes its own sockets, between two polls: closed from this thread,
            # a socket the loop had just found readable was accepted on after its close
            # (EBADF, and waitress's traceback in the log). With the map empty, the loop
            # ends.
            wake = self._trigger()
            try:
                if wake is not None:
                    wake.pull_trigger(lambda: wasyncore.close_all(self._map))
            except OSError:
                pass  # its pipe is closed: the loop is ending by itself, waited for below
            if self._loop_done.wait(timeout=5):
                return
        wasyncore.close_all(self._map)  # no loop running (or a stuck one): nothing races


def make_server(
    app: Flask,
    host: str,
    port: int,
    *,
    streams: int = DEFAULT_STREAMS,
    request_timeout: float = REQUEST_TIMEOUT,
    **adjustments: Any,
) -> WebServer:
    """Bind a waitress server for ``app`` on ``host``:``port`` (0 = any free port).

    ``streams`` event streams may be open at once (the app's stream hub is set
    to admit that many); ``request_timeout`` seconds is what a connection may
    take to send a whole request. ``adjustments`` are waitress settings.

    :raises WebServerError: the address cannot be bound.
    :raises ValueError: ``streams`` below 1 or ``request_timeout`` not positive.
    """
    if streams < 1:
        raise ValueError(f"streams must be at least 1, not {streams}")
    channel_class = timed_channel(request_timeout)
    channel_class.parser_class = type(
        "RouteLimitParser", (RouteLimitParser,), {"limits": body_limits(app)})
    threads = streams + SPARE_THREADS
    settings = {**_waitress_settings(threads), **adjustments}
    socket_map: dict[int, Any] = {}
    # _dispatcher is waitress's hook for its own tests; it is how a pool is supplied.
    dispatcher = GrowingDispatcher(SPARE_THREADS, int(settings["threads"]))
    try:
        inner = create_server(
            app, map=socket_map, _dispatcher=dispatcher, host=host, port=port, **settings
        )
    except OSError as exc:
        dispatcher.shutdown(timeout=5)  # its threads would outlive a server never made
        raise WebServerError(f"cannot serve on {host}:{port}: {exc}") from None
    except BaseException:
        dispatcher.shutdown(timeout=5)
        raise
    for dispatcher in list(socket_map.values()):  # every listening socket, before any accept
        if hasattr(dispatcher, "channel_class"):
            dispatcher.channel_class = channel_class
    hub = app.extensions.get("arbiter_streams")
    if isinstance(hub, StreamHub):
        hub.capacity = streams  # never more streams than threads to hold them
    server = WebServer(app, inner, socket_map)
    # Bound to every address, 127.0.0.1 is one of many: say so (issue 19, finding 16).
    everywhere = server.host in ("", "0.0.0.0", "::")
    log.info("web page on %s", f"every address, port {server.port} (on this machine: "
             f"{server.url})" if everywhere else server.url)
    return server


def _waitress_settings(threads: int) -> dict[str, Any]:
    """Waitress's settings for a pool of ``threads``: the limits the module docstring
    explains, and why each default of waitress's would not do."""
    return {
        "threads": threads,
        "connection_limit": threads + SLOW_CONNECTIONS,
        "channel_timeout": 60,  # waitress's own idle limit; TimedChannel's is shorter
        "cleanup_interval": 15,
        # poll(), not select(): select() fails on a descriptor numbered past 1024,
        # which hundreds of connections (and a test's own sockets) can reach.
        "asyncore_use_poll": True,
        "ident": "gg-arbiter",
        # Keep reading while a request runs, so a closed page is noticed (and its
        # stream's thread freed) at the stream's next write, not after several.
        "channel_request_lookahead": 1,
        "clear_untrusted_proxy_headers": True,
        # Refuse big bodies (413) before reading them: waitress refuses a body
        # of this size or more (answered as JSON by JsonErrorTask); Flask's
        # MAX_CONTENT_LENGTH is the same limit where no waitress is in front.
        "max_request_body_size": MAX_BODY_BYTES + 1,
        # Waitress keeps what a response has sent in its output buffer until the
        # buffer reaches this size (16 MB by default): an event stream open all day
        # would hold every status it sent, per page. A small watermark frees it often.
        "outbuf_high_watermark": OUTBUF_HIGH_WATERMARK,
    }
