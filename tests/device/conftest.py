"""Fixtures for the device tests: a started keys-gpio arbiter on mock pins."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arbiter.app.assembly import build_arbiter
from arbiter.app.config import load_config
from tests.support.rig import Rig, write_config


@pytest.fixture
def rig(tmp_path: Path, mock_factory: Any) -> Iterator[Rig]:
    """A started keys-gpio arbiter (see :func:`write_config`), closed at the end."""
    config = load_config(write_config(tmp_path), data_dir=tmp_path / "data")
    rig = Rig(build_arbiter(config, pin_factory=mock_factory), mock_factory).start()
    try:
        yield rig
    finally:
        rig.arbiter.close()
