"""A spy on a mock buzzer pin: every frequency it is set to, in order."""

from __future__ import annotations

from typing import Any


def record_frequencies(factory: Any, pin: int) -> list[float | None]:
    """Every frequency ``factory``'s mock pin ``pin`` is set to from now on (None = silent)."""
    mock_pin = factory.pin(pin)
    log: list[float | None] = []
    original = mock_pin._set_frequency

    def spy(value: float | None) -> None:
        log.append(value)
        original(value)

    # The pin's `frequency` property calls self._set_frequency: shadow it on this instance.
    mock_pin._set_frequency = spy
    return log
