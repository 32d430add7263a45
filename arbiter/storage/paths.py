"""Where the arbiter keeps its data and looks for its config by default."""

from __future__ import annotations

import os
from pathlib import Path

#: Set by the systemd unit to /var/lib/gg-arbiter.
DATA_ENV = "GG_ARBITER_DATA"
CONFIG_ENV = "GG_ARBITER_CONFIG"


def default_data_dir() -> Path:
    """``$GG_ARBITER_DATA``, else ``$XDG_DATA_HOME/gg-arbiter`` (``~/.local/share/gg-arbiter``)."""
    if os.environ.get(DATA_ENV):
        return Path(os.environ[DATA_ENV])
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "gg-arbiter"


def default_config_path() -> Path | None:
    """``$GG_ARBITER_CONFIG``, else ``/etc/gg-arbiter/config.toml`` if it exists, else None."""
    if os.environ.get(CONFIG_ENV):
        return Path(os.environ[CONFIG_ENV])
    system = Path("/etc/gg-arbiter/config.toml")
    return system if system.exists() else None
