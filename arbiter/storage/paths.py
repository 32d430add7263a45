"""Where the arbiter keeps its data and looks for its config by default."""

from __future__ import annotations

import os
import stat
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


#: Ranks are secret during a game: no other local account may read the data.
PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def make_private_dir(path: Path) -> int | None:
    """Create ``path`` (mode 0700) or tighten an existing one to 0700.

    :returns: the looser mode it had, or None when it was new or already private.
    :raises OSError: it cannot be created or changed.
    """
    path.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077 == 0:
        return None
    os.chmod(path, PRIVATE_DIR_MODE)
    return mode


def tighten_files(directory: Path) -> int:
    """Make the regular files in ``directory`` 0600 where others could read them; how many."""
    changed = 0
    for entry in directory.iterdir():
        info = entry.lstat()
        if stat.S_ISREG(info.st_mode) and info.st_mode & 0o077:
            os.chmod(entry, PRIVATE_FILE_MODE)
            changed += 1
    return changed
