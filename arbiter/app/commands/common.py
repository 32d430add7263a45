"""What the ``gg-arbiter`` commands share: the parser class, the config and data
directory a command works on, the device it builds, and the long-running command's
handler (:class:`Serving`), which the dispatcher gives the stop requests."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from arbiter.app.config import Config, load_config
from arbiter.app.errors import CliError, ConfigError, DataInUseError
from arbiter.app.stopping import StopRequests
from arbiter.errors import ArbiterError
from arbiter.storage.journal import StoreLockedError
from arbiter.storage.paths import DATA_ENV, default_config_path, default_data_dir

if TYPE_CHECKING:
    # The device is loaded only by the commands that build one: `gg-arbiter hub`
    # never loads a device or hardware module.
    from arbiter.device.arbiter import Arbiter


@dataclass(frozen=True)
class Serving:
    """A long-running command's handler (it serves, or loops until told to stop): the
    dispatcher installs the stop requests before it begins and passes them in."""

    handler: Callable[[argparse.Namespace, StopRequests], int]


def add_config_options(p: argparse.ArgumentParser) -> None:
    """``--config`` and ``--data``: the options of every command that works on a table."""
    p.add_argument("--config", metavar="FILE", help="config file (TOML)")
    p.add_argument("--data", metavar="DIR", help="data directory (games, tags, PIN)")


@dataclass(frozen=True)
class BrokerHelp:
    """What one command's ``--help`` says of its broker options (a table's ``run`` and
    the ``hub`` each in their own words: a table's come from its config's
    ``[tournament]`` section, the hub's from the venue's ``broker-config``)."""

    broker: str
    ca_file: str
    password_file: str


def add_broker_options(p: argparse.ArgumentParser, says: BrokerHelp, *,
                       connect_timeout: float | None = None) -> None:
    """``--broker URL``, ``--ca-file PATH`` and ``--password-file FILE``: how a command
    reaches the MQTT broker (the same names, values and meaning for every command); with
    ``connect_timeout``, also the hidden ``--connect-timeout SECONDS`` of that default."""
    p.add_argument("--broker", metavar="URL", help=says.broker)
    p.add_argument("--ca-file", metavar="PATH", help=says.ca_file)
    p.add_argument("--password-file", metavar="FILE", help=says.password_file)
    if connect_timeout is not None:  # the tests' knob: how long the first attempt may take
        p.add_argument("--connect-timeout", type=float, default=connect_timeout,
                       help=argparse.SUPPRESS)


def add_service_options(p: argparse.ArgumentParser) -> None:
    """``--pin`` and ``--port``: for a command the running arbiter may carry out."""
    p.add_argument("--pin", help="admin PIN, when the arbiter is running "
                   "(else $GG_ARBITER_PIN, else asked)")
    p.add_argument("--port", type=port_number,
                   help="the running arbiter's port (default: web.port of the config)")


class Parser(argparse.ArgumentParser):
    """Says a usage error as a :class:`CliError` (one line, exit 2), never exits itself."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise CliError(f"{self.prog}: {message}")


def describe(parser: argparse.ArgumentParser) -> None:
    """Give each subcommand's own ``--help`` what it does: its help line (which argparse
    shows only in the list of its parent) as its description, all the way down."""
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {choice.dest: choice.help for choice in action._choices_actions}
        for name, child in action.choices.items():
            if child.description is None and helps.get(name):
                child.description = helps[name]
            describe(child)


def port_number(text: str) -> int:
    """A TCP port, 0 to 65535 (argparse answers a bad one with exit 2)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port must be 0 to 65535, not {port}")
    return port


def build_device(config: Config, sim: bool) -> Arbiter:
    """The device for run/selftest, with every set-up failure as one clear line."""
    from arbiter.app.assembly import build_arbiter
    from arbiter.drivers.errors import PinSetupError

    try:
        return build_arbiter(config, sim=sim)
    except PinSetupError as exc:
        raise CliError(str(exc)) from None
    except StoreLockedError as exc:
        raise DataInUseError(f"cannot start: {exc}") from None
    except (ArbiterError, OSError) as exc:
        raise CliError(f"cannot start: {exc}") from None


def data_dir(args: argparse.Namespace) -> Path:
    if args.data:
        return Path(args.data)
    return command_config(args).data_dir


#: Where the installed service keeps its data (the systemd unit's GG_ARBITER_DATA).
SERVICE_DATA_DIR = Path("/var/lib/gg-arbiter")


def command_config(args: argparse.Namespace, *, follow_service: bool = True) -> Config:
    """The config; with ``follow_service``, the service's data directory when nothing
    else names one (so a command never works on a second, empty ~/.local/share copy)."""
    path = getattr(args, "config", None) or default_config_path()
    try:
        config = load_config(path, data_dir=getattr(args, "data", None))
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    if (
        follow_service
        and not getattr(args, "data", None)
        and not os.environ.get(DATA_ENV)
        and config.data_dir == default_data_dir()
        and config.data_dir != SERVICE_DATA_DIR
        and SERVICE_DATA_DIR.is_dir()
    ):
        from dataclasses import replace

        print(f"using the service's data directory {SERVICE_DATA_DIR} "
              "(--data DIR for another)", file=sys.stderr)
        config = replace(config, data_dir=SERVICE_DATA_DIR)
    return config


def choose_sim(args: argparse.Namespace, config: Config) -> bool:
    if getattr(args, "sim", False) or config.reader.kind == "sim":
        return True
    from arbiter.drivers.pins import hardware_available

    if not hardware_available():
        print("No GPIO hardware here (not a Raspberry Pi): running the simulator.",
              file=sys.stderr)
        return True
    return False


def stop_service_hint(config: Config, what: str) -> str:
    return (
        f"the arbiter is running (it holds {config.data_dir} and the slots): {what} needs "
        "the hardware to itself. Stop it with 'sudo systemctl stop gg-arbiter' (or Ctrl-C "
        "where 'gg-arbiter run' runs), run the command, then 'sudo systemctl start gg-arbiter'"
    )
