"""Who the game store tells of each append made durable (the broker's outbox)."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class AppendListeners:
    """Who a :class:`GameStore` tells of each append made durable (a challenge, an ending,
    a new game's journal in place): ``listener(game_id)``, on the appending thread,
    outside the store's lock, so a listener must only take note (the broker's outbox
    wakes its publisher), never wait. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: list[Callable[[int], None]] = []

    def add(self, listener: Callable[[int], None]) -> None:
        with self._lock:
            self._listeners.append(listener)

    def remove(self, listener: Callable[[int], None]) -> None:
        """Stop calling ``listener``; nothing happens if it is not one."""
        with self._lock, contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    def tell(self, game_id: int) -> None:
        """Game ``game_id``'s journal holds a new record durably (called after the fsync)."""
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(game_id)
            except Exception:  # a listener's fault is not the record's: it stays written
                log.exception("a listener of the game journal failed")
