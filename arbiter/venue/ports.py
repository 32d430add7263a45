"""Free TCP ports of 127.0.0.1 for a rehearsal's broker, hub and tables on one machine.

A port is chosen now and bound later by another process (Mosquitto, a table's
``run --sim``), so in between nothing else may take it. Asking the kernel for a free port
(binding to port 0) gives one of its ephemeral range, which it hands out again at the next
such request and to every outgoing connection's local end. The ports here come from
below that range instead, one after another from a random start, each checked free and
never handed out twice by a pool.
"""

from __future__ import annotations

import random
import socket
import threading
from pathlib import Path

from arbiter.venue.errors import RehearsalError

#: Below this, ports belong to well-known services.
LOWEST = 10_000
#: Where the kernel's ephemeral range starts when it cannot be read (Linux's default).
EPHEMERAL_START = 32_768
_RANGE_FILE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def ephemeral_start() -> int:
    """The first port of the kernel's ephemeral range (Linux's; its default elsewhere)."""
    try:
        return int(_RANGE_FILE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return EPHEMERAL_START


class PortPool:
    """Ports of one share of ``[LOWEST, ephemeral start)``: ``share`` of ``shares`` equal
    parts, so pools of processes that run side by side (test workers) never pick the same
    port. Thread-safe."""

    def __init__(self, share: int = 0, shares: int = 1, *,
                 rng: random.Random | None = None) -> None:
        top = ephemeral_start()
        span = (top - LOWEST) // max(shares, 1)
        if not 0 <= share < max(shares, 1) or span < 16:
            raise RehearsalError(f"no ports to share below the ephemeral range ({top})"
                                 f" for share {share} of {shares}")
        self.first = LOWEST + share * span
        self.size = span
        self._offset = (rng or random.Random()).randrange(span)
        self._given = 0
        self._lock = threading.Lock()

    def take(self) -> int:
        """The next port of this pool's share that is free now.

        :raises RehearsalError: every port of the share was handed out or is in use."""
        with self._lock:
            while self._given < self.size:
                port = self.first + (self._offset + self._given) % self.size
                self._given += 1
                if _is_free(port):
                    return port
        raise RehearsalError(f"no free port left in {self.first}-{self.first + self.size - 1}")


def _is_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


_pool: PortPool | None = None
_pool_lock = threading.Lock()


def use(pool: PortPool) -> None:
    """Hand out this process's ports from ``pool`` (a test worker's share of the range)."""
    global _pool
    with _pool_lock:
        _pool = pool


def free_port() -> int:
    """A port of 127.0.0.1 free now, from this process's pool (see the module doc)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = PortPool()
        pool = _pool
    return pool.take()
