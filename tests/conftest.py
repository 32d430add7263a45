"""Shared fixtures: a fresh gpiozero MockFactory per test, always restored; a real browser;
and each test marked with its kinds (slow, broker, browser, crash: tests/support/kinds.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.kinds import KINDS, mark
from tests.support.tools import missing, require_tool
from tests.support.web import CHROMIUM_ARGS


@pytest.fixture(autouse=True)
def _fresh_log_budget() -> None:
    """Every test starts with the one log throttle's minute unspent (arbiter.logthrottle):
    lines another test's refusals wrote are not this test's to count."""
    from arbiter.logthrottle import SHARED

    SHARED.reset()


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


@pytest.fixture
def browser() -> Iterator[Any]:
    """Debian's Chromium, headless, driven by Playwright."""
    chromium_path = require_tool("chromium")
    try:
        import playwright.sync_api as sync_api
    except ImportError:
        missing("Playwright is not installed")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()
            sync_api.expect.set_options(timeout=5_000)  # Playwright's default, if a test moved it


def pytest_configure(config: pytest.Config) -> None:
    registered = {line.split(":")[0].strip() for line in config.getini("markers")}
    unregistered = set(KINDS) - registered
    if unregistered:
        raise pytest.UsageError(f"register the markers {sorted(unregistered)} in pyproject.toml")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test with its kinds (tests/support/kinds.py), so that
    ``pytest -m "not slow"`` is the quick inner loop."""
    mark(items)
