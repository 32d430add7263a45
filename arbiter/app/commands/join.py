"""``gg-arbiter join TABLE.toml``: take this table's place in a venue, from the file
``gg-arbiter broker-config`` wrote for it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from arbiter.app.commands.common import (
    add_config_options,
)
from arbiter.app.config import load_config
from arbiter.app.errors import CliError, ConfigError
from arbiter.storage.paths import default_config_path, default_data_dir


def _cmd_join(args: argparse.Namespace) -> int:
    from arbiter.venue.errors import JoinError
    from arbiter.venue.join import configured_data_dir, join, read_venue_file

    path = Path(args.config) if args.config else default_config_path()
    if path is None:
        raise CliError("join: give --config FILE, the table's config (made if missing)")
    try:
        venue = read_venue_file(Path(args.venue_file))
        data = Path(args.data) if args.data else configured_data_dir(path) or default_data_dir()
        secret, ca = join(venue, path, data)
        load_config(path)  # the section written is one the arbiter takes
    except (JoinError, ConfigError) as exc:
        raise CliError(str(exc)) from None
    print(f"table {venue.table} of {venue.event} on {venue.broker}: [tournament] written to "
          f"{path}, the password to {secret}" + (f", the CA to {ca}" if ca else ""))
    print("restart the arbiter to connect (the service: sudo systemctl restart gg-arbiter)")
    return 0


def register(sub: Any) -> None:
    """Add ``join`` to the ``gg-arbiter`` subparsers ``sub``."""
    join_p = sub.add_parser(
        "join", help="take this table's place in a venue: the file broker-config wrote for it")
    add_config_options(join_p)
    join_p.add_argument("venue_file", metavar="TABLE.toml",
                        help="table-N.toml, with table-N.password beside it")
    join_p.set_defaults(func=_cmd_join)
