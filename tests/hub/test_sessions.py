"""The hub's reconnection backoff: doubling from a second, capped, jittered (issue 27)."""

from __future__ import annotations

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from arbiter.hub import sessions
from arbiter.hub.sessions import Backoff, retry_delay


def test_retry_delay_doubles_to_its_cap_and_is_drawn_in_its_upper_half() -> None:
    # The longest wait of each failure: 1, 2, 4, 8 s, then the cap, however many.
    longest = [retry_delay(n, 1.0) for n in range(1, 8)]
    assert longest == [1.0, 2.0, 4.0, 8.0, 15.0, 15.0, 15.0]
    assert retry_delay(1000, 1.0) == 15.0
    # Each drawn between half of it and all of it: a venue's clients do not all knock at once.
    assert [retry_delay(n, 0.0) for n in (1, 3, 9)] == [0.5, 2.0, 7.5]
    assert retry_delay(3, 0.5) == 3.0


def test_backoff_sets_pahos_next_wait_and_starts_again_once_connected() -> None:
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="t")
    draws = iter([1.0] * 10)
    backoff = Backoff(client, draw=lambda: next(draws))
    waits = [backoff.failed() for _ in range(6)]
    assert waits == [1.0, 2.0, 4.0, 8.0, sessions.MAX_DELAY, sessions.MAX_DELAY]
    backoff.succeeded()
    assert backoff.failed() == 1.0
