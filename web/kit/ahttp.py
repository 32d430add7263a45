"""The asynchronous server's HTTP/1.1 connection (uvicorn's, with h11): its timeout and
its refusals.

A connection that has not sent a whole request within ``request_timeout`` seconds
(idle, trickling, or silent after its answer) is closed; a request the parser refuses
answers 400 JSON, and one past the server's connection limit a quick 503 JSON, both
with the security headers. The server that uses it is :mod:`web.kit.aserve`.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from arbiter.logthrottle import LogThrottle
from web.kit.astream import TRANSPORT, Receive, Scope, Send
from web.kit.hooks import SECURITY_HEADERS

log = logging.getLogger(__name__)

#: Seconds a connection may take to send a whole request (or stay idle between two).
REQUEST_TIMEOUT = 10.0
#: Seconds a client refused past the connection limit is asked to wait (Retry-After).
BUSY_RETRY_AFTER = 5
#: The refusal past the connection limit (uvicorn's own says "Service Unavailable", as text).
BUSY = "busy: too many connections to this server at once; try again in a few seconds"


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
                await answer_json(send, 503, BUSY,
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


async def answer_json(send: Send, status: int, error: str,
                      extra: list[tuple[bytes, bytes]] | None = None) -> None:
    """Answer ``{"error": error}`` with the security headers and close the connection."""
    raw = json.dumps({"error": error}).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"cache-control", b"no-store"),
        (b"content-length", str(len(raw)).encode()), (b"connection", b"close"),
        *((k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()),
        *(extra or [])]})
    await send({"type": "http.response.body", "body": raw, "more_body": False})
