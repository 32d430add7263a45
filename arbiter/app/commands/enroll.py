"""``gg-arbiter enroll``: enroll RFID tags, a guided walk through the 42 pieces (through
the running arbiter when it runs)."""

from __future__ import annotations

import argparse
from typing import Any

from arbiter.app.commands.common import (
    Serving,
    add_config_options,
    add_service_options,
    command_config,
)
from arbiter.app.config import Config
from arbiter.app.errors import CliError
from arbiter.app.service_client import enroll_through_service, service_running
from arbiter.app.stopping import StopRequests


def _cmd_enroll(args: argparse.Namespace, requests: StopRequests) -> int:
    config = command_config(args)
    if config.reader.kind not in ("rdm6300", "mcu"):
        raise CliError(
            f"enrollment is for RFID readers; reader.kind is {config.reader.kind!r}"
            " (set it to rdm6300 or mcu)"
        )

    running, lock = service_running(config, args)
    if running and not args.sim:
        return enroll_through_service(config, args, requests)
    try:
        return _enroll_here(config, args, requests)
    finally:
        if lock is not None:
            lock.release()


def _enroll_here(config: Config, args: argparse.Namespace, requests: StopRequests) -> int:
    """No arbiter runs (or ``--sim``): open the reader here, or the simulator's slots
    (holding the data directory meanwhile)."""
    from arbiter.app.enroll_console import run_enrollment_walk

    return run_enrollment_walk(config, args.piece, sim=args.sim, requests=requests)


def register(sub: Any) -> None:
    """Add ``enroll`` to the ``gg-arbiter`` subparsers ``sub``."""
    enroll = sub.add_parser("enroll", help="enroll RFID tags: a guided walk through 42 pieces")
    add_config_options(enroll)
    enroll.add_argument("--piece", metavar="PIECE",
                        help="re-enroll one piece, e.g. W:PVT#3 or B:5*G")
    enroll.add_argument("--sim", action="store_true",
                        help="rehearse: simulated stickers, Enter seats the piece asked for")
    add_service_options(enroll)
    enroll.set_defaults(func=Serving(_cmd_enroll))
