"""Shared fixtures: a fresh gpiozero MockFactory per test, always restored."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture
def mock_factory() -> Iterator[object]:
    """Install gpiozero's MockFactory (with PWM pins) as the default pin factory."""
    from gpiozero import Device
    from gpiozero.pins.mock import MockFactory, MockPWMPin

    previous = Device.pin_factory
    factory = MockFactory(pin_class=MockPWMPin)
    Device.pin_factory = factory
    try:
        yield factory
    finally:
        factory.reset()
        Device.pin_factory = previous
