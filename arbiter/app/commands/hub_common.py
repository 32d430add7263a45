"""What the ``gg-arbiter hub`` commands share: the broker link and login, the ledger,
the one-line error, the span of time an option takes."""

from __future__ import annotations

import argparse
import json
import sqlite3
import ssl
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arbiter.app.errors import HubCliError
from arbiter.hub.ledger import Ledger, ResendAsk
from arbiter.hub.outgoing import publish_once
from arbiter.mqtt.address import BrokerAddress
from arbiter.mqtt.errors import BrokerAddressError
from arbiter.mqtt.tls import client_context
from arbiter.storage.paths import default_data_dir
from arbiter.tournament.model import Result
from arbiter.wire import AssignmentMessage

RESULTS = {r.value: r for r in Result} | {"none": None}


@dataclass(frozen=True)
class BrokerLink:
    """How the hub reaches its broker: the address, the login, TLS (None: plain MQTT)."""

    address: BrokerAddress
    username: str | None
    password: str | None = field(repr=False)
    tls: ssl.SSLContext | None


def broker_login(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """The hub's user and password for the broker: ``mqtt://USER[:PASSWORD]@...``, the
    password read from ``--password-file`` when given (broker-config writes secrets/hub.password).
    """
    address = _address(args.broker)
    username, password = address.username, address.password
    if args.password_file:
        try:
            password = Path(args.password_file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise HubCliError(f"cannot read the broker password: {exc}") from None
        if not username:
            raise HubCliError("--password-file needs a user in the broker URL: mqtt://hub@HOST")
    return username, password


def broker_link(args: argparse.Namespace) -> BrokerLink:
    """``--broker`` (mqtt:// or mqtts://), its login and, for mqtts://, ``--ca-file``.

    :raises HubCliError: a bad URL, password file, or ``--ca-file`` without mqtts://.
    :raises BrokerTlsError: the CA file cannot be used.
    """
    address = _address(args.broker)
    ca_file = getattr(args, "ca_file", None)
    if ca_file and not address.tls:
        raise HubCliError("--ca-file is for an mqtts:// broker (TLS); never used for mqtt://")
    tls = client_context(Path(ca_file) if ca_file else None) if address.tls else None
    return BrokerLink(address, *broker_login(args), tls)


def _address(url: str) -> BrokerAddress:
    try:
        return BrokerAddress.parse(url)
    except BrokerAddressError as exc:
        raise HubCliError(str(exc)) from None


def publish_once_to_broker(args: argparse.Namespace,
                  assignments: Mapping[str, AssignmentMessage | None],
                  resends: Sequence[ResendAsk] = ()) -> None:
    """Publish ``assignments`` (and ``resends``) once, to the broker of ``--broker``."""
    link = broker_link(args)
    publish_once(link.address.host, link.address.port, args.event, assignments,
                 username=link.username, password=link.password, tls=link.tls,
                 resends=resends)


def open_ledger(args: argparse.Namespace) -> Ledger:
    """The event\'s ledger in ``--data`` (default: the hub\'s data directory)."""
    data = Path(args.data) if args.data else default_data_dir() / "hub"
    try:
        data.mkdir(parents=True, exist_ok=True)
        return Ledger(data / "hub.sqlite", args.event)
    except (OSError, sqlite3.Error) as exc:
        raise HubCliError(f"cannot open the ledger in {data}: {exc}") from None


def print_json(value: Any) -> None:
    print(json.dumps(value, indent=1, ensure_ascii=False))


#: The longest span a --*-after option takes, in its unit (a week of minutes).
MAX_SPAN = 7 * 24 * 60.0


def span(text: str) -> float:
    """A span of time of 0 to MAX_SPAN (argparse answers a bad one with exit 2)."""
    value = float(text)  # ValueError: argparse's "invalid span value"
    if not 0 <= value <= MAX_SPAN:  # also NaN and inf
        raise argparse.ArgumentTypeError(f"{text!r} is not from 0 to {MAX_SPAN:g}")
    return value
