"""``gg-arbiter hub SUBCOMMAND``: read the event's ledger out and keep it (exports, archives,
the audit log, missing events, silent tables) and set the organiser PIN of the hub's pages,
each subcommand beside its handler; the subcommands that change the event are
:mod:`.hub_ledger`'s."""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

from arbiter.app.commands.hub_common import open_ledger, publish_once_to_broker, span
from arbiter.app.errors import HubCliError
from arbiter.errors import PinFormatError
from arbiter.hub.exports import KINDS, export, trf
from arbiter.pinrule import RULE as PIN_RULE
from arbiter.pinrule import legacy_pin_note
from arbiter.storage.paths import default_data_dir
from web.kit.auth import set_pin
from web.kit.errors import AuthError


def _set_pin(args: argparse.Namespace) -> int:
    data = Path(args.data) if args.data else default_data_dir() / "hub"
    pin = args.pin if args.pin is not None else getpass.getpass(f"new organiser PIN ({PIN_RULE}): ")
    try:
        set_pin(data, pin, "hub set-pin")
    except PinFormatError as exc:
        raise HubCliError(f"{exc}; nothing changed{legacy_pin_note(pin)}") from None
    except AuthError as exc:
        raise HubCliError(str(exc)) from None
    print("organiser PIN set; every organiser session has ended")
    return 0


def _export(args: argparse.Namespace) -> int:
    with open_ledger(args) as ledger:
        if args.kind == "trf":
            sys.stdout.write(trf(ledger))
        else:
            sys.stdout.write(export(ledger, args.kind, args.format))
    return 0


def _archive(args: argparse.Namespace) -> int:
    with open_ledger(args) as ledger:
        if args.action == "export":
            Path(args.file).write_text(json.dumps(ledger.archive.export(), indent=1) + "\n")
        else:
            try:
                data = json.loads(Path(args.file).read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise HubCliError(f"cannot read the archive {args.file}: {exc}") from None
            ledger.archive.load(data)
    return 0


def _audit(args: argparse.Namespace) -> int:
    with open_ledger(args) as ledger:
        for c in ledger.admin.audit():
            print(f"{c.at}\t{c.who}\t{c.what}\t{c.target}\t{c.before} -> {c.after}")
    return 0


def _gaps(args: argparse.Namespace) -> int:
    if args.resend and not args.broker:
        raise HubCliError("gg-arbiter hub gaps --resend needs --broker URL")
    with open_ledger(args) as ledger:
        out = {t: runs for t in ledger.tables.names() if (runs := ledger.tables.missing(t))}
        # Records too: a table's record topic holds only its latest, so a hub that was
        # away (or a fresh ledger) may lack earlier games' records.
        records = {t: games for t in ledger.tables.names()
                   if (games := ledger.tables.missing_records(t))}
        asks = [ledger.events.ask_resend(t, out.get(t, ()), records.get(t, ()))
                for t in sorted(set(out) | set(records))] if args.resend else []
        refused = ledger.events.rejections()
        in_all = sum(ledger.events.refused().values())
    if not out and not records:
        print("no table has events or records missing")
    for table, runs in out.items():
        spans = ", ".join(f"{a}" if a == b else f"{a} to {b}" for a, b in runs)
        count = sum(b - a + 1 for a, b in runs)
        print(f"table {table}: {count} event{'' if count == 1 else 's'} missing ({spans})")
    for table, games in records.items():
        print(f"table {table}: the record{'' if len(games) == 1 else 's'} of game"
              f"{'' if len(games) == 1 else 's'} {', '.join(games)} missing")
    # Messages refused (not the wire format, another table's name...): never among the
    # missing, so said apart, on stderr (stdout says what is missing).
    for at, table, seq, why in refused[-20:]:
        print(f"refused {at} table {table}" + (f" seq {seq}" if seq else "") + f": {why}",
              file=sys.stderr)
    if in_all > 20:
        print(f"({in_all} refused in all; the organiser page lists the latest 50)",
              file=sys.stderr)
    if asks:
        publish_once_to_broker(args, {}, asks)
        for ask in asks:
            print(f"table {ask.table}: resend asked (request {ask.id})")
    return 1 if out or records else 0


def _silent(args: argparse.Namespace) -> int:
    with open_ledger(args) as ledger:
        silent = ledger.tables.silent(timedelta(minutes=args.quiet))
        rounds = ledger.admin.rounds()
    for table, why in silent:
        print(f"{table}\t{why}")
    if not silent:  # a sentence, so that an empty answer is never mistaken for a failure
        if not rounds:
            print("no table is silent: no round is paired yet")
        else:
            print(f"no table is silent: every table of round {rounds[-1][0]} with a game"
                  f" to finish was heard from in the last {args.quiet:g} minutes")
    return 1 if silent else 0


def register(cmds: Any) -> None:
    """Add the reports' subcommands to ``hub``'s subparsers ``cmds`` (after the ledger's:
    ``hub --help`` lists them in this order)."""
    exp = cmds.add_parser(
        "export", help="standings, pairings or games as CSV or JSON; trf: the event as a FIDE "
        "TRF file")
    exp.add_argument("kind", choices=(*KINDS, "trf"), help="standings, pairings, games or trf")
    exp.add_argument("--format", choices=("csv", "json"), default="csv",
                     help="csv (the default) or json; trf is always TRF")
    exp.set_defaults(func=_export)

    archive = cmds.add_parser("archive", help="the whole event as JSON: export, or import")
    archive.add_argument("action", choices=("export", "import"),
                         help="export: write the file; import: load it into an empty ledger")
    archive.add_argument("file", help="the archive's JSON file")
    archive.set_defaults(func=_archive)

    pin = cmds.add_parser("set-pin", help="set the organiser PIN of the hub's web pages")
    pin.add_argument("pin", nargs="?", help=f"{PIN_RULE} (asked for when left out)")
    pin.set_defaults(func=_set_pin)

    cmds.add_parser("audit", help="print the audit log").set_defaults(func=_audit)
    gaps = cmds.add_parser("gaps", help="missing table events and records (exit 1 if any)")
    gaps.add_argument("--resend", action="store_true",
                      help="ask each table with missing events or records to publish them "
                           "again (needs --broker)")
    gaps.set_defaults(func=_gaps)
    silent = cmds.add_parser(
        "silent", help="tables of the round offline or quiet with a game on (exit 1 if any)"
    )
    silent.add_argument("--quiet", type=span, default=10.0, metavar="MINUTES",
                        help="no event for this long counts as silent (default 10)")
    silent.set_defaults(func=_silent)
