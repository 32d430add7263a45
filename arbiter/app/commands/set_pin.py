"""``gg-arbiter set-pin [PIN]``: set the admin PIN of the status page."""

from __future__ import annotations

import argparse
from typing import Any

from arbiter.app.commands.common import (
    add_config_options,
    command_config,
)
from arbiter.app.errors import CliError
from arbiter.app.service_client import ask_pin
from arbiter.errors import PinFormatError
from arbiter.pinrule import RULE as PIN_RULE
from arbiter.pinrule import legacy_pin_note


def _cmd_set_pin(args: argparse.Namespace) -> int:
    from web.kit.auth import set_pin
    from web.kit.errors import AuthError

    config = command_config(args)
    pin = args.pin
    if pin is None:
        hint = "give it as an argument: gg-arbiter set-pin PIN"
        pin = ask_pin(f"New admin PIN ({PIN_RULE}): ", hint)
        if ask_pin("Again: ", hint) != pin:
            raise CliError("the two PINs differ; nothing changed")
    try:
        set_pin(config.data_dir, pin)
    except PinFormatError as exc:
        raise CliError(f"{exc}; nothing changed{legacy_pin_note(pin)}") from None
    except AuthError as exc:
        raise CliError(str(exc)) from None
    print(f"admin PIN changed (stored hashed in {config.data_dir / 'admin.json'})")
    return 0


def register(sub: Any) -> None:
    """Add ``set-pin`` to the ``gg-arbiter`` subparsers ``sub``."""
    set_pin = sub.add_parser("set-pin", help="set the admin PIN of the status page")
    add_config_options(set_pin)
    set_pin.add_argument("pin", metavar="PIN", nargs="?", help=f"{PIN_RULE} (asked if left out)")
    set_pin.set_defaults(func=_cmd_set_pin)
