"""What the hub's ledger took, told to whoever follows it (the venue feed, the resender).

The ingest owns one :class:`Changes` and announces on it, from its writer thread,
each table message the ledger committed (its :class:`arbiter.wire.Topic`), and from
paho's thread each rise and fall of its own broker link. Followers subscribe
themselves; the CLI only wires the objects together. A follower must only mark
what changed and wake its own thread: it runs on the ingest's thread.
"""

from __future__ import annotations

import logging
import threading
from typing import Protocol

from arbiter.wire import Topic

log = logging.getLogger(__name__)


class ChangeFollower(Protocol):
    """Told of each table message the ledger committed."""

    def changed(self, table: str, kind: Topic) -> None: ...


class LinkFollower(Protocol):
    """Told when the hub's own broker link goes up (subscribed) or down."""

    def link_changed(self, up: bool) -> None: ...


class Changes:
    """The followers of one ingest. Thread-safe; a follower that raises is logged and the
    others are still told."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._changes: list[ChangeFollower] = []
        self._links: list[LinkFollower] = []

    def follow(self, follower: ChangeFollower) -> None:
        """Tell ``follower`` of every change from now on."""
        with self._lock:
            self._changes.append(follower)

    def follow_link(self, follower: LinkFollower) -> None:
        """Tell ``follower`` of every change of the hub's broker link from now on."""
        with self._lock:
            self._links.append(follower)

    def changed(self, table: str, kind: Topic) -> None:
        """The ledger committed a ``kind`` message of ``table``."""
        with self._lock:
            followers = list(self._changes)
        for follower in followers:
            try:
                follower.changed(table, kind)
            except Exception:  # one follower's fault must not stop the ingest or the rest
                log.exception("a follower of the hub's changes failed")

    def link_changed(self, up: bool) -> None:
        """The hub's broker link went up or down."""
        with self._lock:
            followers = list(self._links)
        for follower in followers:
            try:
                follower.link_changed(up)
            except Exception:
                log.exception("a follower of the hub's broker link failed")
