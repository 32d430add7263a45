"""``gg-arbiter run``: the device, the status page and (simulator) the console.

The device and the web server are independent: a web server that cannot
bind its port is logged and the device keeps judging; a failing request
never reaches the device's worker thread.
"""

from __future__ import annotations

import errno
import ipaddress
import logging
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from arbiter.app.config import Config
from arbiter.app.stopping import StopRequests
from arbiter.app.watchdog import Watchdog
from arbiter.device.arbiter import Arbiter
from arbiter.threads import BackgroundThread, declare

if TYPE_CHECKING:
    from flask import Flask

    from arbiter.fleet.link import FleetLink
    from web.kit.serve import WebServer

log = logging.getLogger(__name__)

STATUS_PAGE = declare("web", __name__,
                      "serves the table's status page (waitress's loop; its workers are its own)")
WATCHDOG = declare("watchdog", __name__,
                   "tells systemd the device is healthy, so a hung arbiter is restarted")


def serve(
    config: Config,
    arbiter: Arbiter,
    *,
    host: str,
    port: int,
    stdin: TextIO | None = None,
    out: Callable[[str], object] = print,
    started: float | None = None,
    requests: StopRequests | None = None,
) -> int:
    """Run ``arbiter`` until SIGTERM/SIGINT (or ``quit`` on the simulator console).

    Call it from the main thread: ``requests`` are the command's stop requests
    (when None, its own, installed here).

    Closes the arbiter on the way out. ``started`` is when start-up began
    (``time.monotonic()``), for the ready line.
    """
    t0 = started if started is not None else time.monotonic()
    quiet_web_server_logs()
    if requests is not None:
        return _serve(config, arbiter, host=host, port=port, stdin=stdin, out=out,
                      started=t0, requests=requests)
    with StopRequests() as own:
        return _serve(config, arbiter, host=host, port=port, stdin=stdin, out=out,
                      started=t0, requests=own)


#: The web servers' loggers: their INFO lines ("Client disconnected while serving
#: /api/events" each time a page closes) are noise among the device's lines.
WEB_SERVER_LOGGERS = ("waitress", "werkzeug")


def quiet_web_server_logs() -> None:
    """Keep the web servers' INFO lines off the console; warnings and errors still show.

    ``GG_ARBITER_LOG=DEBUG`` (the root logger at DEBUG) keeps them all.
    """
    if logging.getLogger().getEffectiveLevel() <= logging.DEBUG:
        return
    for name in WEB_SERVER_LOGGERS:
        logger = logging.getLogger(name)
        if logger.level < logging.WARNING:  # a level set on purpose stays
            logger.setLevel(logging.WARNING)


def _serve(
    config: Config,
    arbiter: Arbiter,
    *,
    host: str,
    port: int,
    stdin: TextIO | None,
    out: Callable[[str], object],
    started: float,
    requests: StopRequests,
) -> int:
    t0 = started
    stop = threading.Event()  # set by the main thread only, for the other threads
    page: _Page | None = None
    link: FleetLink | None = None
    threads: list[BackgroundThread] = []
    try:
        app = _table_app(config, arbiter, out)
        for problem in arbiter.store.problems:
            out(f"data warning: {problem}")
        arbiter.start()
        link = start_link(config, arbiter, out)
        page = _Page(app, host, port, stop, out, config)
        page.bind_once()  # the usual case: the page is up before the ready line
        page_run = page.run
        threads.append(BackgroundThread(lambda _stopping: page_run(), STATUS_PAGE,
                                        wake=page.close))
        threads[-1].start()
        out(f"gg-arbiter ready in {time.monotonic() - t0:.2f} s "
            f"({'simulator' if arbiter.sim else config.reader.kind}, data in {config.data_dir})")

        watchdog = Watchdog()
        watchdog.notify("READY=1")
        threads.append(BackgroundThread(
            lambda stopping: watchdog.run(arbiter.is_healthy, stopping), WATCHDOG))
        threads[-1].start()

        if arbiter.sim is not None and stdin is not None:
            _start_console(arbiter, stdin, stop, requests.request, out)
        requests.wait()  # a stop signal, or `quit` on the console
        out("shutting down")
        watchdog.notify("STOPPING=1")
        return 0
    finally:
        stop.set()
        for thread in threads:
            thread.stop()
        if page is not None:
            page.close()
        if link is not None:
            link.close()
        arbiter.close()


def _table_app(config: Config, arbiter: Arbiter, out: Callable[[str], object]) -> Flask:
    """The status page's app, the admin PIN made (and shown once) if there was none."""
    # No arbiter without its page: a page that cannot be built (a bad PIN, a
    # broken install) stops start-up here, with its one-line reason (exit 2).
    from web.kit.auth import ensure_admin
    from web.kit.errors import AdminFileError
    from web.table import create_app

    try:
        new_pin = ensure_admin(config.data_dir, config.web.admin_pin)
    except AdminFileError as exc:  # the public page works without it
        new_pin = None
        out(f"admin access off: {exc}; repair it with gg-arbiter set-pin")
    if new_pin:
        out(f"Admin PIN (shown once; change it with gg-arbiter set-pin): {new_pin}")
    return create_app(arbiter)


def start_link(config: Config, arbiter: Arbiter, out: Callable[[str], object]) -> FleetLink | None:
    """The tournament broker link, when one is configured: started, never waited on."""
    settings = config.tournament
    if settings.broker is None or arbiter.fleet is None:
        return None
    from arbiter.fleet.link import FleetLink

    # The journal tells the link of each append (the outbox is the journals); the device
    # of each status it makes. The link changes the fleet state, which the page's status
    # shows: one way, never back to the link.
    link = FleetLink(settings, config.data_dir, arbiter.fleet, store=arbiter.store,
                     status=arbiter.status)
    arbiter.add_status_listener(link.status_changed)
    link.start()
    out(f"tournament: table {settings.table} of {settings.event} on {settings.broker}")
    return link


#: Seconds between binding attempts while the page's port is in use (then it gives up).
BIND_RETRY_DELAYS = (0.5, 1.0, 2.0, 4.0, 8.0)


class _Page:
    """The status page's server: bound (retrying while its port is in use), then served.

    A port in use at start is often a previous arbiter still closing (a quick
    restart): the page retries with a growing delay, says so once on the
    console and in the log, and says again only how it ended.
    """

    def __init__(
        self,
        app: Flask,
        host: str,
        port: int,
        stop: threading.Event,
        out: Callable[[str], object],
        config: Config | None = None,
    ) -> None:
        self._app = app
        # The page's capacity ([web] stream_capacity, request_timeout); else serve's defaults.
        self._limits: dict[str, Any] = {}
        if config is not None:
            self._limits = {"streams": config.web.stream_capacity,
                            "request_timeout": config.web.request_timeout}
        self._host = host
        self._port = port
        self._stop = stop
        self._out = out
        self._lock = threading.Lock()
        self._server: WebServer | None = None
        self._closed = False
        self._in_use = False  # the port was in use: binding is retried

    def bind_once(self) -> None:
        """One attempt, now; on a port in use, :meth:`run` retries."""
        from web.kit.errors import WebServerError
        from web.kit.serve import make_server

        try:
            server = make_server(self._app, self._host, self._port, **self._limits)
        except WebServerError as exc:
            if not _address_in_use(exc):
                log.error("status page not started: %s", exc)
                self._out(f"status page not started: {exc}")
                self._closed = True
                return
            if not self._in_use:
                self._in_use = True
                total = sum(BIND_RETRY_DELAYS)
                message = (f"status page: port {self._port} is in use (another gg-arbiter, "
                           f"or another program?); retrying for {total:.0f} s")
                log.warning("%s", message)
                self._out(message)
            return
        with self._lock:
            if self._closed:
                server.close()
                return
            self._server = server
        if self._in_use:
            log.warning("status page: port %d is free now: serving", self._port)
        self._out(status_page_line(self._host, server.port, server.url,
                                   socket.gethostname()))

    def run(self) -> None:
        """Retry binding while the port is in use, then serve until :meth:`close`."""
        for delay in BIND_RETRY_DELAYS:
            if self._server is not None or self._closed:
                break
            if self._stop.wait(delay):
                return
            self.bind_once()
        server = self._server
        if server is None:
            if self._in_use and not self._closed:
                message = (f"status page not started: port {self._port} is still in use; "
                           "the device judges without its page (free the port, or choose "
                           "another with --port or [web] port, and restart)")
                log.error("%s", message)
                self._out(message)
            return
        try:
            server.run()
        except Exception:
            log.exception("status page stopped")

    def close(self) -> None:
        with self._lock:
            self._closed = True
            server, self._server = self._server, None
        if server is not None:
            server.close()


def _address_in_use(exc: BaseException) -> bool:
    """Whether ``exc`` (or the error it was raised from) is "address already in use"."""
    cause = exc.__cause__ or exc.__context__
    return isinstance(cause, OSError) and cause.errno == errno.EADDRINUSE


def _start_console(
    arbiter: Arbiter,
    stdin: TextIO,
    stop: threading.Event,
    request_stop: Callable[[], None],
    out: Callable[[str], object],
) -> None:
    from arbiter.app.sim_console import start_console

    start_console(arbiter, stdin, stop, request_stop, out)  # a finished script asks to stop


def stdin_or_none() -> TextIO | None:
    """Standard input if there is one to read (not closed)."""
    try:
        return sys.stdin if sys.stdin and not sys.stdin.closed else None
    except (AttributeError, ValueError):
        return None


def status_page_line(host: str, port: int, url: str, hostname: str) -> str:
    """What the console says of the status page: ``url`` (reachable from this machine),
    and a phone's address only when a phone can reach it (not bound to loopback)."""
    phone = f"http://{hostname.split('.')[0]}.local:{port}/"
    if host in ("", "0.0.0.0", "::"):
        return (f"Status page: {url}  (listening on every address: from a phone on the "
                f"same network {phone})")
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if loopback:
        return (f"Status page: {url}  (this machine only: for phones, --host 0.0.0.0 or "
                "[web] host)")
    return f"Status page: {url}  (from a phone on the same network too)"
