"""A spy on a mock buzzer pin: every frequency it is set to, in order."""

from __future__ import annotations

import threading
from typing import Any

from tests.support.waiting import WAIT


class FrequencyLog(list[float | None]):
    """The frequencies a buzzer pin was set to (None = silent), as a list that can be
    waited on: :meth:`wait_sounding` returns once a tone has started."""

    def __init__(self) -> None:
        super().__init__()
        self._cond = threading.Condition()

    def record(self, value: float | None) -> None:
        with self._cond:
            self.append(value)
            self._cond.notify_all()

    def wait_sounding(self, timeout: float = WAIT) -> None:
        """Wait until some tone has been set on the pin.

        :raises AssertionError: after ``timeout`` s of silence.
        """
        with self._cond:
            ok = self._cond.wait_for(lambda: any(hz is not None for hz in self), timeout)
        assert ok, f"the buzzer stayed silent for {timeout} s"


def record_frequencies(factory: Any, pin: int) -> FrequencyLog:
    """Spy on ``factory``'s mock pin ``pin``: every frequency it is set to, in order."""
    mock_pin = factory.pin(pin)
    log = FrequencyLog()
    original = mock_pin._set_frequency

    def spy(value: float | None) -> None:
        log.record(value)
        original(value)

    # The pin's `frequency` property calls self._set_frequency: shadow it on this instance.
    mock_pin._set_frequency = spy
    return log
