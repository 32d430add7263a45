"""Free TCP ports of 127.0.0.1 for a rehearsal's broker, hub and tables on one machine."""

from __future__ import annotations

import socket
import threading

_issued: set[int] = set()
_lock = threading.Lock()


def free_port() -> int:
    """A port of 127.0.0.1 that was free a moment ago and that this process has not handed
    out before. The kernel may give a port just closed again at the next bind to port 0, so
    two ports asked for one after the other (a broker's plain and TLS listeners, a hub's and
    a table's pages) could be the same, and the second listener then fails to bind."""
    with _lock:
        while True:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port: int = s.getsockname()[1]
            if port not in _issued:
                _issued.add(port)
                return port
