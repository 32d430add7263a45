"""The outbox's messages handed to paho and not yet acknowledged, with the broker's answers.

The publisher thread adds each message it sends and moves the cursor over the
acknowledged head, in order; paho's network thread records each PUBACK (taken, or
refused with a reason). A refusal holds everything behind it back: the publisher drops
the window and sends again from the cursor later.
"""

from __future__ import annotations

import collections
import threading

import paho.mqtt.client as mqtt

from arbiter.fleet.outbox import Cursor, Pending
from arbiter.fleet.resend_service import ResendService


class InFlight:
    """The window of sent messages, oldest first, and the broker's answers to them.

    :meth:`answered` runs on paho's thread; everything else on the publisher's.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sent: collections.deque[tuple[mqtt.MQTTMessageInfo, Pending]] = (
            collections.deque())
        self._acked: set[int] = set()  # message ids the broker acknowledged (PUBACK)
        self._refusals: dict[int, str] = {}  # message ids it refused, and why

    def __len__(self) -> int:
        return len(self._sent)

    def add(self, info: mqtt.MQTTMessageInfo, pending: Pending) -> None:
        """``pending`` was handed to paho as ``info``."""
        self._sent.append((info, pending))

    def answered(self, mid: int, refusal: str | None) -> None:
        """The broker's PUBACK for message ``mid``: taken, or refused for ``refusal``."""
        with self._lock:
            if refusal is not None:
                self._refusals[mid] = refusal
            else:
                self._acked.add(mid)

    def advance(self, cursor: Cursor, resend: ResendService) -> Cursor:
        """``cursor`` moved over the acknowledged head of the window; ``resend`` is told
        of the acknowledgements of its own messages."""
        moved = cursor
        with self._lock:
            while self._sent and self._sent[0][0].mid in self._acked:
                info, pending = self._sent.popleft()
                self._acked.discard(info.mid)
                moved = pending.after
            resend.settled(self._acked)
            # Every outbox message sent is in the window (or the resend job) by now: other
            # ids acknowledged (status, online) are dropped, so no stale id can match a
            # later message's.
            self._acked &= {info.mid for info, _ in self._sent}
        return moved

    def take_refusals(self) -> dict[int, str]:
        """The refusals since the last call: message id -> the broker's reason."""
        with self._lock:
            refusals, self._refusals = self._refusals, {}
        return refusals

    def first_refused(self, refusals: dict[int, str]) -> tuple[int, Pending] | None:
        """The oldest message of the window among ``refusals``: its id and what it was."""
        for info, pending in self._sent:
            if info.mid in refusals:
                return info.mid, pending
        return None

    def drop(self) -> None:
        """Forget the whole window: it goes out again from the cursor."""
        with self._lock:
            self._acked -= {info.mid for info, _ in self._sent}
        self._sent.clear()
