"""``gg-arbiter run``: the arbiter (the simulator where there is no Pi), its status
page and, with ``--broker``, its tournament link, until stopped."""

from __future__ import annotations

import argparse
import time
from typing import Any

from arbiter.app.commands.common import (
    BrokerHelp,
    Serving,
    add_broker_options,
    add_config_options,
    build_device,
    choose_sim,
    command_config,
    port_number,
)
from arbiter.app.errors import CliError
from arbiter.app.stopping import StopRequests

TABLE_BROKER_HELP = BrokerHelp(
    broker="tournament broker: mqtt://[user[:password]@]host[:port], or mqtts://... "
           "with [tournament] ca_file (docs/tournament/broker.md)",
    ca_file="mqtts:// only: the CA that signed the broker's certificate "
            "(as [tournament] ca_file; this wins)",
    password_file="the broker password, first line of FILE (as [tournament] "
                  "password_file; this wins): kept out of the URL, which ps shows",
)


def _cmd_run(args: argparse.Namespace, requests: StopRequests) -> int:
    config = command_config(args, follow_service=False)
    if args.script:
        args.sim = True  # a script plays the simulator's slots
    sim = choose_sim(args, config)
    from arbiter.app.service import serve, stdin_or_none

    flags = (args.broker, args.event, args.table, args.ca_file, args.password_file)
    if any(flag is not None for flag in flags):
        from dataclasses import replace

        from arbiter.fleet.errors import SettingsError

        try:
            tournament = config.tournament.override(
                broker=args.broker, event=args.event, table=args.table, ca_file=args.ca_file,
                password_file=args.password_file)
        except SettingsError as exc:
            raise CliError(str(exc)) from None
        if args.ca_file and not tournament.configured:  # else it would be ignored silently
            raise CliError("--ca-file is for an mqtts:// broker (give --broker too)")
        if args.password_file and not tournament.configured:
            raise CliError("--password-file is the broker's password (give --broker too)")
        config = replace(config, tournament=tournament)
    host = args.host or config.web.host
    port = args.port if args.port is not None else config.web.port
    started = time.monotonic()
    if not args.script:
        arbiter = build_device(config, sim)
        return serve(config, arbiter, host=host, port=port, stdin=stdin_or_none(),
                     started=started, requests=requests)
    try:
        script = open(args.script, encoding="utf-8")  # noqa: SIM115 (closed below)
    except OSError as exc:
        raise CliError(f"cannot read the script {args.script}: {exc.strerror}") from None
    with script:
        arbiter = build_device(config, sim)
        return serve(config, arbiter, host=host, port=port, stdin=script, started=started,
                     requests=requests)


def register(sub: Any) -> None:
    """Add ``run`` to the ``gg-arbiter`` subparsers ``sub``."""
    run = sub.add_parser("run", help="run the arbiter (the simulator where there is no Pi)")
    add_config_options(run)
    run.add_argument("--sim", action="store_true", help="simulator: no hardware needed")
    run.add_argument("--host", help="address the status page listens on")
    run.add_argument("--port", type=port_number, help="port of the status page")
    run.add_argument("--script", metavar="FILE",
                     help="play simulator commands from FILE, each once the device has "
                     "settled, then stop (implies --sim)")
    add_broker_options(run, TABLE_BROKER_HELP)
    run.add_argument("--event", metavar="SLUG", help="tournament event (topic gg/SLUG/...)")
    run.add_argument("--table", metavar="NAME", help="this table's name in the tournament")
    run.set_defaults(func=Serving(_cmd_run))
