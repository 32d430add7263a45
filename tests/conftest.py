"""Shared fixtures: a fresh gpiozero MockFactory per test, always restored; a real browser."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.web import CHROMIUM, CHROMIUM_ARGS


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


def _missing(what: str) -> None:
    """In CI a missing browser is a broken install: fail. On a laptop: skip."""
    message = f"{what} (bash setup.sh --dev installs it)"
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the browser tests: {message}")
    pytest.skip(message)


@pytest.fixture
def browser() -> Iterator[Any]:
    """Debian's Chromium, headless, driven by Playwright."""
    if not os.path.exists(CHROMIUM):
        _missing(f"{CHROMIUM} is not installed")
    try:
        import playwright.sync_api as sync_api
    except ImportError:
        _missing("Playwright is not installed")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
            sync_api.expect.set_options(timeout=5_000)  # Playwright's default, if a test moved it
