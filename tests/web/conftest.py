"""Fixtures of the table's and the kit's tests (the kit is tested through the table's
app): a running simulator device, closed at the end."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.web import running_device


@pytest.fixture
def device(tmp_path: Path) -> Iterator[Any]:
    """A started simulator device with its data in ``tmp_path / "data"``."""
    with running_device(tmp_path / "data") as dev:
        yield dev
