"""``gg-arbiter join table-N.toml``: a table takes its place in a venue in one command.

``broker-config`` writes one small file per table (its ``[tournament]`` section, the
paths relative to the file) with the table's password beside it. Joining checks the
file, puts the password in the data directory (0600: the config file is readable by
every account), copies the CA file (if any) beside the config, and writes the
``[tournament]`` section of the table's config, replacing one that is there and
keeping every other line.
"""

from __future__ import annotations

import os
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

from arbiter.fleet.errors import SettingsError
from arbiter.fleet.settings import TournamentSettings
from arbiter.storage.durable import write_durably
from arbiter.venue.errors import JoinError

#: In the table's data directory: its broker password.
PASSWORD_NAME = "broker.password"
#: Beside the table's config: the CA that signed the broker's certificate.
CA_NAME = "broker-ca.pem"


@dataclass(frozen=True)
class VenueFile:
    """A table's venue file, checked: its settings and its password."""

    broker: str
    event: str
    table: str
    password: str
    ca: bytes | None


def read_venue_file(path: Path) -> VenueFile:
    """:raises JoinError: naming the file and what is wrong."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise JoinError(f"{path}: cannot read it: {exc}") from None
    t = raw.get("tournament")
    if not isinstance(t, dict) or not all(
        isinstance(t.get(k), str) for k in ("broker", "event", "table", "password_file")
    ):
        raise JoinError(f"{path}: not a table's venue file (gg-arbiter broker-config writes "
                        "them: [tournament] broker, event, table, password_file)")
    here = path.parent
    ca_name = t.get("ca_file")
    try:
        TournamentSettings.build(t["broker"], t["event"], t["table"],
                                 ca_file=ca_name if isinstance(ca_name, str) else "")
    except SettingsError as exc:
        raise JoinError(f"{path}: {exc}") from None
    secret = here / t["password_file"]
    try:
        password = secret.read_text(encoding="utf-8").splitlines()[0].strip()
        ca = (here / ca_name).read_bytes() if isinstance(ca_name, str) and ca_name else None
    except (OSError, IndexError, UnicodeDecodeError) as exc:
        raise JoinError(f"{path}: {exc} (keep the files broker-config wrote beside it)") \
            from None
    if not password:
        raise JoinError(f"{secret}: no password in it")
    return VenueFile(t["broker"], t["event"], t["table"], password, ca)


def configured_data_dir(config: Path) -> Path | None:
    """The config's ``data_dir`` (read alone: its ``[tournament]`` may be what is being
    replaced); None: not set.

    :raises JoinError: the config is there but is not TOML.
    """
    if not config.exists():
        return None
    try:
        value = tomllib.loads(config.read_text(encoding="utf-8")).get("data_dir")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise JoinError(f"{config}: cannot read it: {exc}") from None
    return Path(value) if isinstance(value, str) and value else None


def section_text(venue: VenueFile, password_file: Path, ca_file: Path | None) -> str:
    lines = [
        "[tournament]",
        "# Written by gg-arbiter join: this table's place in the venue.",
        f'broker = "{venue.broker}"',
        f'event = "{venue.event}"',
        f'table = "{venue.table}"',
        f'password_file = "{password_file}"',
    ]
    if ca_file is not None:
        lines.append(f'ca_file = "{ca_file}"')
    return "\n".join(lines) + "\n"


def with_section(config: str, section: str) -> str:
    """``config`` with its ``[tournament]`` table (header to the next header) replaced
    by ``section``, or ``section`` appended."""
    out: list[str] = []
    skipping = False
    for line in config.splitlines(keepends=True):
        header = line.strip()
        if header.startswith("["):
            skipping = header.split("#")[0].strip() == "[tournament]"
        if not skipping:
            out.append(line)
    text = "".join(out)
    if text and not text.endswith("\n"):
        text += "\n"
    return text + ("\n" if text and not text.endswith("\n\n") else "") + section


def join(venue: VenueFile, config: Path, data_dir: Path) -> tuple[Path, Path | None]:
    """Install ``venue`` into the table's ``config`` (created if missing) and
    ``data_dir``; returns (the password file, the CA file or None).

    :raises JoinError: a file cannot be written (nothing half-done is left in the config).
    """
    password_file = data_dir / PASSWORD_NAME
    ca_file = config.parent / CA_NAME if venue.ca is not None else None
    try:
        old = config.read_text(encoding="utf-8") if config.exists() else ""
        data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_durably(password_file, (venue.password + "\n").encode())
        _same_owner(password_file, data_dir)
        if ca_file is not None and venue.ca is not None:
            ca_file.write_bytes(venue.ca)
            ca_file.chmod(0o644)
        mode = config.stat().st_mode & 0o777 if config.exists() else 0o644
        write_durably(config, with_section(old, section_text(venue, password_file, ca_file))
                      .encode())
        config.chmod(mode)
    except OSError as exc:
        raise JoinError(f"cannot write the table's files: {exc}") from None
    return password_file, ca_file


def _same_owner(path: Path, like: Path) -> None:
    """Run as root for the appliance: the password goes to the data directory's owner
    (the service's user), who alone reads it."""
    if os.geteuid() == 0:
        st = like.stat()
        shutil.chown(path, st.st_uid, st.st_gid)
