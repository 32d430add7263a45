"""Fixtures of the hub's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.mqtt import mosquitto


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[int]:
    """A real Mosquitto on a free port (its port); a module may define its own."""
    with mosquitto(tmp_path / "broker") as port:
        yield port
