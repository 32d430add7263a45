"""Serving the app with waitress, sized for open status pages.

Every open Server-Sent Events stream holds one waitress worker thread for as
long as the page is open, so the pool is sized for the viewers plus the
admin's and the API's short requests::

    server = make_server(app, "0.0.0.0", 8080)
    threading.Thread(target=server.run, daemon=True).start()
    ...
    server.close()   # ends the streams, stops the workers, closes the sockets
"""

from __future__ import annotations

import json
import logging
from typing import Any

from flask import Flask
from waitress import wasyncore
from waitress.channel import HTTPChannel
from waitress.server import create_server
from waitress.task import ErrorTask

from arbiter.errors import ArbiterError
from web.body import MAX_BODY_BYTES
from web.events import StreamHub

log = logging.getLogger(__name__)

#: 20 status pages (the product's target) twice over, plus admin and API requests.
DEFAULT_THREADS = 48


class WebServerError(ArbiterError):
    """The server could not be started (address in use, bad host)."""


class JsonErrorTask(ErrorTask):  # type: ignore[misc]  # waitress has no type hints
    """Waitress's own refusals (body too large, bad request line, headers too
    big), which never reach Flask, in the API's documented form: JSON
    ``{"error": ...}`` with the app's security headers."""

    def execute(self) -> None:
        from web import SECURITY_HEADERS

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


class JsonErrorChannel(HTTPChannel):  # type: ignore[misc]
    """A waitress connection whose own error answers are :class:`JsonErrorTask`."""

    error_task_class = JsonErrorTask


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

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}/"

    def run(self) -> None:
        """Serve until :meth:`close` (blocks; run it in a thread)."""
        try:
            self._inner.run()
        except (OSError, ValueError):
            if not self._closed:  # a closed socket's last poll is expected noise
                raise

    def close(self) -> None:
        """End the streams, stop the worker threads, close every socket. Idempotent."""
        if self._closed:
            return
        self._closed = True
        hub = self.app.extensions.get("arbiter_streams")
        if isinstance(hub, StreamHub):
            hub.stop()
        self._inner.task_dispatcher.shutdown(timeout=5)
        wasyncore.close_all(self._map)


def make_server(
    app: Flask,
    host: str,
    port: int,
    threads: int = DEFAULT_THREADS,
    **adjustments: Any,
) -> WebServer:
    """Bind a waitress server for ``app`` on ``host``:``port`` (0 = any free port).

    :raises WebServerError: the address cannot be bound.
    """
    settings: dict[str, Any] = {
        "threads": threads,
        "connection_limit": max(100, threads * 2),
        "channel_timeout": 60,  # idle keep-alive connections; a stream is never idle
        "cleanup_interval": 15,
        "ident": "gg-arbiter",
        # Keep reading while a request runs, so a closed page is noticed (and its
        # stream's thread freed) at the stream's next write, not after several.
        "channel_request_lookahead": 1,
        "clear_untrusted_proxy_headers": True,
        # Refuse big bodies (413) before reading them: waitress refuses a body
        # of this size or more (answered as JSON by JsonErrorTask); Flask's
        # MAX_CONTENT_LENGTH is the same limit where no waitress is in front.
        "max_request_body_size": MAX_BODY_BYTES + 1,
    }
    settings.update(adjustments)
    socket_map: dict[int, Any] = {}
    try:
        inner = create_server(app, map=socket_map, host=host, port=port, **settings)
    except OSError as exc:
        raise WebServerError(f"cannot serve on {host}:{port}: {exc}") from None
    for dispatcher in list(socket_map.values()):  # every listening socket, before any accept
        if hasattr(dispatcher, "channel_class"):
            dispatcher.channel_class = JsonErrorChannel
    server = WebServer(app, inner, socket_map)
    log.info("web page on %s", server.url)
    return server
