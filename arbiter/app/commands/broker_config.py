"""``gg-arbiter broker-config``: the organiser's locked-down Mosquitto configuration
for a venue of N tables, and each table's venue file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from arbiter.app.commands.common import (
    port_number,
)
from arbiter.app.errors import CliError


def _cmd_broker_config(args: argparse.Namespace) -> int:
    from arbiter.venue.brokerconf import (
        BROKER_USER,
        TlsListener,
        unreadable_by_broker,
        write_broker_config,
    )
    from arbiter.venue.errors import BrokerConfigError

    if (args.tls_cert is None) != (args.tls_key is None):
        raise CliError("broker-config: give --tls-cert and --tls-key together")
    tls = (TlsListener(Path(args.tls_cert), Path(args.tls_key), args.tls_port)
           if args.tls_cert else None)
    try:
        files = write_broker_config(Path(args.out), event=args.event, tables=args.tables,
                                    port=args.listen_port, force=args.force, tls=tls,
                                    listen=args.listen or "", host=args.host or "",
                                    ca_file=Path(args.tls_ca) if args.tls_ca else None)
    except BrokerConfigError as exc:
        raise CliError(str(exc)) from None
    print(f"wrote {files.conf}, {files.passwd.name}, {files.acl.name} "
          f"({len(files.users) - 2} tables, the hub and the organiser's commands)")
    print(f"passwords, one file per user: {files.secrets}/ (the hub logs in as hub; "
          "its commands beside it, as organiser)")
    print(f"one file per table, with its password beside it: {files.tables}/table-N.toml "
          f"(broker {files.url}); on table N: sudo bash setup.sh --service --venue "
          "table-N.toml, or gg-arbiter join table-N.toml")
    if tls is not None:
        print(f"TLS on port {tls.port} (plain MQTT on {args.listen_port} for this machine "
              "only): tables and the hub use mqtts:// with the CA file that signed "
              f"{tls.cert.name}; the user mosquitto runs as must read {tls.key.name}")
        for path in unreadable_by_broker([tls.cert, tls.key]):
            print(f"warning: user {BROKER_USER} cannot read {path}: mosquitto will not start "
                  f"(e.g. chgrp {BROKER_USER} {path} && chmod g+r {path})", file=sys.stderr)
    print(f"start the broker: mosquitto -c {files.conf}")
    return 0


def register(sub: Any) -> None:
    """Add ``broker-config`` to the ``gg-arbiter`` subparsers ``sub``."""
    broker = sub.add_parser(
        "broker-config", help="write a locked-down Mosquitto config for a venue of N tables")
    broker.add_argument("--tables", type=int, required=True, metavar="N",
                        help="tables 1..N")
    broker.add_argument("--event", required=True, metavar="SLUG", help="the event's name")
    broker.add_argument("--out", required=True, metavar="DIR", help="where to write the files")
    broker.add_argument("--listen-port", type=port_number, default=1883, metavar="PORT",
                        help="the broker's port (default 1883)")
    broker.add_argument("--listen", metavar="ADDRESS",
                        help="the address the broker listens on (default: every address)")
    broker.add_argument("--host", metavar="NAME",
                        help="the broker's name or address as the tables reach it, for their "
                             "files (default: the --listen address, else HOSTNAME.local)")
    broker.add_argument("--tls-ca", metavar="CA",
                        help="with TLS: the CA that signed the certificate, given to the tables")
    broker.add_argument("--force", action="store_true",
                        help="replace existing files (every password changes)")
    broker.add_argument("--tls-cert", metavar="CERT",
                        help="the broker's certificate (PEM, chain): adds a TLS listener")
    broker.add_argument("--tls-key", metavar="KEY", help="the certificate's private key (PEM)")
    broker.add_argument("--tls-port", type=port_number, default=8883, metavar="PORT",
                        help="the TLS listener's port (default 8883)")
    broker.set_defaults(func=_cmd_broker_config)
