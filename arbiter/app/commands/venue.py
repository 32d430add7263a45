"""``gg-arbiter venue rehearse``: a venue on one machine (a broker, the hub and N
simulated tables, playing), to try the whole day before the event."""

from __future__ import annotations

import argparse
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

from arbiter.app.commands.common import Serving, port_number
from arbiter.app.errors import CliError
from arbiter.app.stopping import StopRequests
from arbiter.threads import BackgroundThread, declare

STARTER = declare("venue rehearsal start", __name__,
                  "starts a rehearsed venue's processes while the main thread waits for a stop")


def _say(text: str) -> None:
    print(text, flush=True)


def _rehearse(args: argparse.Namespace, requests: StopRequests) -> int:
    from arbiter.venue.errors import RehearsalError
    from arbiter.venue.rehearse import Plan, Rehearsal

    players = args.players if args.players is not None else 2 * args.tables
    try:
        plan = Plan(tables=args.tables, players=players, rounds=args.rounds,
                    event=args.event, hub_port=args.port, seed=args.seed)
    except RehearsalError as exc:
        raise CliError(str(exc)) from None
    work = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="gg-rehearsal-"))
    work.mkdir(parents=True, exist_ok=True)
    rehearsal = Rehearsal(plan, work, _say)
    problem: list[str] = []

    def start(stopping: threading.Event) -> None:
        try:
            rehearsal.start(stopping)
        except RehearsalError as exc:
            if not stopping.is_set():  # not the stop asked for, while it started
                problem.append(str(exc))
                requests.request()
            return
        if stopping.is_set():
            return
        _say(f"venue rehearsal of {plan.event!r}: {plan.tables} tables, {players} players,"
             f" {plan.rounds} rounds, in {work}")
        _say(f"the hub: http://127.0.0.1:{plan.hub_port}/ (the screen: /screen; the"
             f" organiser: /organiser, PIN {rehearsal.pin})")
        for name, port in rehearsal.table_ports.items():
            _say(f"table {name}: http://127.0.0.1:{port}/")
        _say("playing; Ctrl-C stops everything")
        rehearsal.play().join()
        if rehearsal.failed:
            problem.append(rehearsal.failed)
            requests.request()
        elif rehearsal.played.is_set():
            _say(f"all {plan.rounds} rounds played: look at the standings and the exports;"
                 " Ctrl-C stops everything")

    # The main thread waits for Ctrl-C (SIGINT) or SIGTERM while the venue starts and plays.
    starter = BackgroundThread(start, STARTER, wake=None)
    starter.start()
    try:
        requests.wait()
    finally:
        starter.stopping.set()
        rehearsal.stop()
        starter.stop(5.0)
    if not args.dir:  # a temporary directory of its own: nothing to keep
        shutil.rmtree(work, ignore_errors=True)
    _say("rehearsal stopped: the broker, the hub and the tables have ended"
         + (f"; its files stay in {work}" if args.dir else ""))
    if problem:
        raise CliError(f"venue rehearse: {problem[0]}")
    return 0


def register(sub: Any) -> None:
    """Add ``venue`` (``venue rehearse``) to the ``gg-arbiter`` subparsers ``sub``."""
    venue = sub.add_parser("venue", help="try a venue on one machine before the event")
    cmds = venue.add_subparsers(dest="venue_command", metavar="ACTION")
    cmds.required = True
    rehearse = cmds.add_parser(
        "rehearse", help="a broker, the hub and N simulated tables playing, until Ctrl-C")
    rehearse.add_argument("--tables", type=int, default=4, metavar="N",
                          help="simulated tables (default 4)")
    rehearse.add_argument("--players", type=int, metavar="M",
                          help="players (default 2 x tables)")
    rehearse.add_argument("--rounds", type=int, default=3, metavar="R",
                          help="Swiss rounds to play (default 3)")
    rehearse.add_argument("--event", default="rehearsal", metavar="SLUG",
                          help="the event's name (default rehearsal)")
    rehearse.add_argument("--port", type=port_number, default=8088, metavar="PORT",
                          help="the hub's web port on 127.0.0.1 (default 8088)")
    rehearse.add_argument("--dir", metavar="DIR",
                          help="where the venue's files, data and logs go, kept afterwards"
                               " (default: a new temporary directory)")
    rehearse.add_argument("--seed", type=int, metavar="N",
                          help="seed of the games' outcomes (default: random)")
    rehearse.set_defaults(func=Serving(_rehearse))
