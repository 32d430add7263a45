"""systemd's watchdog, fed only while the device makes progress."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


def systemd_notify() -> Callable[[str], object]:
    """What sends one notification to systemd (sd_notify: READY=1, STATUS=..., WATCHDOG=1);
    it does nothing where systemd asked for none (no NOTIFY_SOCKET)."""
    import sdnotify

    notifier = sdnotify.SystemdNotifier()

    def notify(message: str) -> object:
        return notifier.notify(message)

    return notify


def _interval_from_env() -> float:
    """Half of systemd's ``WATCHDOG_USEC`` in seconds; 0 when there is no watchdog."""
    usec = int(os.environ.get("WATCHDOG_USEC", "0") or 0)
    return usec / 2e6 if usec else 0.0


class Watchdog:
    """READY=1 once serving; WATCHDOG=1 every ``interval`` s while ``healthy()`` holds.

    ``healthy`` is the device's heartbeat check (:meth:`Arbiter.is_healthy`; the hub's:
    its web loop turns and its ledger writer keeps up), not whether its thread exists: a
    hung worker must let systemd restart it.

    :param notify: sends one notification (default: to systemd's socket).
    :param interval: seconds between checks (default: from ``WATCHDOG_USEC``;
        0 turns the watchdog off).
    :param what: what ``healthy`` checks, in the log's lines when it fails and recovers.
    """

    def __init__(
        self,
        notify: Callable[[str], object] | None = None,
        interval: float | None = None,
        what: str = "the device's worker",
    ) -> None:
        self._notify = notify if notify is not None else systemd_notify()
        self.interval = interval if interval is not None else _interval_from_env()
        self._what = what
        self._starving = False

    def notify(self, message: str) -> None:
        self._notify(message)

    def tick(self, healthy: Callable[[], bool]) -> bool:
        """Feed the watchdog if ``healthy()``; whether it was fed. Says once when it stops."""
        if healthy():
            if self._starving:
                log.warning("%s makes progress again: feeding the watchdog", self._what)
                self._starving = False
            self.notify("WATCHDOG=1")
            return True
        if not self._starving:
            log.error("%s makes no progress: the watchdog is no longer fed, systemd will "
                      "restart the service", self._what)
            self._starving = True
        return False

    def run(self, healthy: Callable[[], bool], stop: threading.Event) -> None:
        """Check every ``interval`` s until ``stop`` is set (a thread's target)."""
        if not self.interval:
            return
        while not stop.wait(self.interval):
            self.tick(healthy)
