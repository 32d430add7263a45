"""``gg-arbiter run``: the device, the status page and (simulator) the console.

The device and the web server are independent: a web server that cannot
bind its port is logged and the device keeps judging; a failing request
never reaches the device's worker thread.
"""

from __future__ import annotations

import logging
import socket
import sys
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from arbiter.app.config import Config
from arbiter.app.stopping import StopRequests
from arbiter.app.watchdog import Watchdog
from arbiter.device.arbiter import Arbiter

if TYPE_CHECKING:
    from web.serve import WebServer

log = logging.getLogger(__name__)


def serve(
    config: Config,
    arbiter: Arbiter,
    *,
    host: str,
    port: int,
    stdin: TextIO | None = None,
    out: Callable[[str], object] = print,
    started: float | None = None,
) -> int:
    """Run ``arbiter`` until SIGTERM/SIGINT (or ``quit`` on the simulator console).

    Call it from the main thread (signal handlers are installed there).

    Closes the arbiter on the way out. ``started`` is when start-up began
    (``time.monotonic()``), for the ready line.
    """
    t0 = started if started is not None else time.monotonic()
    with StopRequests() as requests:
        return _serve(config, arbiter, host=host, port=port, stdin=stdin, out=out,
                      started=t0, requests=requests)


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
    server: WebServer | None = None
    try:
        try:  # the device works without its page
            from web import create_app
            from web.auth import ensure_admin
            from web.serve import make_server

            new_pin = ensure_admin(config.data_dir, config.web.admin_pin)
            if new_pin:
                out(f"Admin PIN (shown once; change it with gg-arbiter set-pin): {new_pin}")
            server = make_server(create_app(arbiter), host, port)
        except Exception as exc:
            log.error("status page not started: %s", exc)
            out(f"status page not started: {exc}")
            server = None
        for problem in arbiter.store.problems:
            out(f"data warning: {problem}")
        arbiter.start()
        if server is not None:
            threading.Thread(target=_serve_forever, args=(server,), name="web", daemon=True).start()
            out(f"Status page: {server.url}  (from a phone on the same network: "
                f"http://{socket.gethostname()}.local:{server.port}/)")
        out(f"gg-arbiter ready in {time.monotonic() - t0:.2f} s "
            f"({'simulator' if arbiter.sim else config.reader.kind}, data in {config.data_dir})")

        watchdog = Watchdog()
        watchdog.notify("READY=1")
        threading.Thread(
            target=watchdog.run, args=(arbiter.is_healthy, stop), name="watchdog", daemon=True
        ).start()

        if arbiter.sim is not None and stdin is not None:
            _start_console(arbiter, stdin, stop, requests.request, out)
        requests.wait()  # a stop signal, or `quit` on the console
        out("shutting down")
        watchdog.notify("STOPPING=1")
        return 0
    finally:
        stop.set()
        if server is not None:
            server.close()
        arbiter.close()


def _serve_forever(server: WebServer) -> None:
    try:
        server.run()
    except Exception:
        log.exception("status page stopped")


def _start_console(
    arbiter: Arbiter,
    stdin: TextIO,
    stop: threading.Event,
    request_stop: Callable[[], None],
    out: Callable[[str], object],
) -> None:
    from arbiter.app.sim_console import SimConsole

    console = SimConsole(arbiter, out)
    arbiter.add_output_listener(console.show_outputs)
    updates = arbiter.subscribe()

    def follow() -> None:
        while not stop.is_set():
            status = updates.get()
            if status is None:
                return
            console.show_status(status)

    def read() -> None:
        out("simulator: type 'help' for commands (attacker W:5*G, defender B:SPY, clear, ...)")
        for line in stdin:
            if not console.command(line.strip()):
                request_stop()
                break
        # End of input (a script finished, or no terminal under systemd): keep serving.

    def unfollow() -> None:
        stop.wait()
        arbiter.unsubscribe(updates)
        updates.put_nowait(None)  # type: ignore[arg-type]

    for target in (follow, read, unfollow):
        threading.Thread(target=target, daemon=True, name=f"console-{target.__name__}").start()


def stdin_or_none() -> TextIO | None:
    """Standard input if there is one to read (not closed)."""
    try:
        return sys.stdin if sys.stdin and not sys.stdin.closed else None
    except (AttributeError, ValueError):
        return None
