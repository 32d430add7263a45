"""Reading an HTTP event stream as a browser does: headers, chunked framing, and the
``Content-Encoding`` (gzip or deflate) undone incrementally, then SSE messages.

Used by the hub feed's tests and by bench/bench_hub_venue.py (whose viewers count
the bytes on the wire and parse what they decode).
"""

from __future__ import annotations

import json
import selectors
import socket
import time
import zlib
from typing import Any

WBITS = {"gzip": 31, "deflate": 15}


class StreamDecoder:
    """Feed it the bytes of one HTTP response as they arrive; get the SSE messages.

    Every message's ``id:`` is kept in :attr:`ids`; with ``parse`` False the messages
    are not parsed (a cheap viewer of a benchmark's crowd, counting what it got)."""

    def __init__(self, parse: bool = True) -> None:
        self.parse = parse
        self.ids: list[str] = []
        self.head: bytes | None = None
        self.headers: dict[str, str] = {}
        self.status = 0
        self._raw = b""
        self._chunked = False
        self._need = -1  # bytes left in the current chunk; -1: a size line is next
        self._inflate: Any = None
        self._text = b""
        self.body = b""  # every decoded byte of the body
        self.ended = False

    def feed(self, data: bytes) -> list[dict[str, Any]]:
        """Take ``data``; return the ``data:`` messages now complete (as JSON)."""
        self._raw += data
        if self.head is None:
            if b"\r\n\r\n" not in self._raw:
                return []
            self.head, _, self._raw = self._raw.partition(b"\r\n\r\n")
            lines = self.head.decode("latin-1").split("\r\n")
            self.status = int(lines[0].split()[1])
            for line in lines[1:]:
                key, _, value = line.partition(":")
                self.headers[key.strip().lower()] = value.strip()
            self._chunked = self.headers.get("transfer-encoding", "") == "chunked"
            encoding = self.headers.get("content-encoding", "identity")
            if encoding in WBITS:
                self._inflate = zlib.decompressobj(WBITS[encoding])
        body: bytes = b""
        if not self._chunked:
            body, self._raw = self._raw, b""
        while self._chunked and self._raw:
            if self._need == -2:  # the CRLF ending a chunk
                if len(self._raw) < 2:
                    break
                self._raw = self._raw[2:]
                self._need = -1
                continue
            if self._need < 0:
                if b"\r\n" not in self._raw:
                    break
                size, _, self._raw = self._raw.partition(b"\r\n")
                self._need = int(size.split(b";")[0], 16)
                if self._need == 0:
                    self.ended = True
                    self._raw = b""
                    break
            take = self._raw[:self._need]
            body += take
            self._raw = self._raw[len(take):]
            self._need -= len(take)
            if self._need == 0:
                self._need = -2
        if self._inflate is not None and body:
            body = self._inflate.decompress(body)
        if self.parse:
            self.body += body
        self._text += body
        *messages, self._text = self._text.split(b"\n\n")
        out = []
        for message in messages:
            for field in message.split(b"\n"):
                if field.startswith(b"id: "):
                    self.ids.append(field[4:].decode())
                elif field.startswith(b"data: ") and self.parse:
                    out.append(json.loads(field[6:]))
        return out


def open_stream(port: int, headers: dict[str, str] | None = None,
                path: str = "/api/events") -> socket.socket:
    """A raw socket that has asked for ``path`` with ``headers``."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 f"Accept: text/event-stream\r\n{extra}\r\n".encode())
    return sock


def streams_showing(socks: list[socket.socket], mark: bytes, timeout: float) -> int:
    """Read every socket (an open event stream, not compressed) until each has shown
    ``mark``, or closed; how many showed it within ``timeout`` seconds."""
    seen: dict[socket.socket, bytes] = dict.fromkeys(socks, b"")
    done = 0
    with selectors.DefaultSelector() as selector:
        for sock in socks:
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        while done < len(socks) and time.monotonic() < deadline:
            for key, _ in selector.select(0.2):
                ready = key.fileobj
                assert isinstance(ready, socket.socket)
                sock = ready
                try:
                    chunk = sock.recv(65536)
                except BlockingIOError:
                    continue
                seen[sock] = seen[sock][-len(mark):] + chunk
                if mark in seen[sock] or not chunk:
                    selector.unregister(sock)
                    done += mark in seen[sock]
    return done
