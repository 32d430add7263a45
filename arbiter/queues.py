"""The bounded queue every status and event stream uses: a slow reader loses its oldest
items and never blocks the sender. Standard library only, so every layer may import it.
"""

from __future__ import annotations

import contextlib
import queue
from typing import TypeVar

T = TypeVar("T")


def put_dropping_oldest(q: queue.Queue[T], item: T) -> None:
    """Put ``item`` on a bounded queue, dropping the oldest entries to make room."""
    while True:
        try:
            q.put_nowait(item)
            return
        except queue.Full:
            with contextlib.suppress(queue.Empty):
                q.get_nowait()
