"""The one lifecycle every background thread of the arbiter and the hub uses.

Like gpiozero's ``GPIOThread``: a daemon thread that carries a ``stopping`` event,
passed to its target, and a :meth:`BackgroundThread.stop` that sets it and joins.
Standard library only, so every layer may import it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class BackgroundThread(threading.Thread):
    """A daemon thread running ``target(stopping)`` until ``stopping`` is set.

    The target should wait on ``stopping`` (``stopping.wait(timeout)``) or on a
    blocking call with a timeout, so that :meth:`stop` returns promptly. A target that
    waits on a queue instead passes ``wake``, which :meth:`stop` calls after setting
    ``stopping`` (e.g. to put the queue's stop marker).
    """

    def __init__(
        self,
        target: Callable[[threading.Event], None],
        name: str,
        *,
        wake: Callable[[], None] | None = None,
    ) -> None:
        self.stopping = threading.Event()
        self._wake = wake
        super().__init__(target=target, args=(self.stopping,), name=name, daemon=True)

    def stop(self, timeout: float | None = 5.0) -> bool:
        """Ask the thread to stop and wait up to ``timeout`` s; True once it has ended.

        Safe to call twice, before :meth:`start`, and from the thread itself (it
        then only asks).
        """
        first = not self.stopping.is_set()
        self.stopping.set()
        if first and self._wake is not None and self.ident is not None:
            self._wake()
        if self.ident is None or self is threading.current_thread():
            return self.ident is None
        self.join(timeout)
        if self.is_alive():
            log.warning("thread %s did not stop within %s s", self.name, timeout)
            return False
        return True
