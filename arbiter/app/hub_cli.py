"""``gg-arbiter hub ...``: run an event's hub, and script its ledger.

``gg-arbiter hub --event SLUG --broker URL`` serves (MQTT ingest into the
ledger) until stopped; with a subcommand it acts on the ledger and exits:
players, pairing, assignments, corrections, standings, exports, archives.
The ledger is ``DIR/hub.sqlite`` (``--data DIR``).
"""

from __future__ import annotations

import argparse
import getpass
import json
import logging
import signal
import sqlite3
import ssl
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from arbiter.errors import ArbiterError
from arbiter.hub.broker_link import Ingest, publish_once
from arbiter.hub.exports import KINDS, export, trf
from arbiter.hub.ledger import Ledger, ResendAsk
from arbiter.hub.resend import GRACE, Resender
from arbiter.mqtt.address import BrokerAddress, BrokerAddressError
from arbiter.mqtt.tls import client_context
from arbiter.pinrule import RULE as PIN_RULE
from arbiter.pinrule import PinFormatError, legacy_pin_note
from arbiter.storage.paths import default_data_dir
from arbiter.tournament.errors import NoLegalPairingError
from arbiter.tournament.model import Pairing, Result
from arbiter.tournament.standings import TieBreak
from arbiter.tournament.trf import import_trf
from arbiter.wire import AssignmentMessage
from web.hub import create_hub_app
from web.hub.feed import VenueFeed
from web.hub.views import suggested_tables
from web.kit.auth import AuthError, set_pin
from web.kit.serve import WebServerError, make_server

log = logging.getLogger(__name__)

DEFAULT_WEB_PORT = 8088
RESULTS = {r.value: r for r in Result} | {"none": None}


class HubCliError(ArbiterError):
    """A hub command given wrong input: printed as one line."""


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


def _publish_once(args: argparse.Namespace,
                  assignments: Mapping[str, AssignmentMessage | None],
                  resends: Sequence[ResendAsk] = ()) -> None:
    link = broker_link(args)
    publish_once(link.address.host, link.address.port, args.event, assignments,
                 username=link.username, password=link.password, tls=link.tls,
                 resends=resends)


def _ledger(args: argparse.Namespace) -> Ledger:
    data = Path(args.data) if args.data else default_data_dir() / "hub"
    try:
        data.mkdir(parents=True, exist_ok=True)
        return Ledger(data / "hub.sqlite", args.event)
    except (OSError, sqlite3.Error) as exc:
        raise HubCliError(f"cannot open the ledger in {data}: {exc}") from None


def _print_json(value: Any) -> None:
    print(json.dumps(value, indent=1, ensure_ascii=False))


def _serve(args: argparse.Namespace) -> int:
    if not args.broker:
        raise HubCliError("gg-arbiter hub: give --broker URL to serve (or a subcommand)")
    link = broker_link(args)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    with _ledger(args) as ledger:
        feed = VenueFeed(ledger, timedelta(minutes=args.silent_after))
        ingest = Ingest(ledger, args.event, link.address.host, link.address.port,
                        username=link.username,
                        password=link.password, tls=link.tls)
        resender = Resender(ledger, ingest.publish_resend, grace=args.resend_after)
        ingest.changes.follow(feed)
        ingest.changes.follow_link(feed)
        ingest.changes.follow(resender)
        # Connected and subscribed first: a broker that cannot be reached, or TLS that
        # cannot work (BrokerTlsError, at once), stops the hub in one line (said by main)
        # before it shows a PIN or opens its web port.
        ingest.start(timeout=args.connect_timeout)
        try:
            app = create_hub_app(ledger, feed, ledger.path.parent,
                                 publish=ingest.publish_assignment, resend=resender.ask)
            # Waitress keeps everything a response has sent in its current output
            # buffer (it never prunes a buffer that has once been partly sent) until
            # the buffer reaches outbuf_high_watermark, 16 MB by default: a venue
            # stream sends about 1 MB a minute, so 200 viewers would grow the hub by
            # 200 MB a minute. A 256 KB watermark starts a new buffer (and frees the
            # old) that often; a backlog past 64 KB goes to a temporary file.
            server = make_server(app, args.host, args.port, outbuf_overflow=64 * 1024,
                                 outbuf_high_watermark=256 * 1024)
        except BaseException as exc:
            ingest.stop()
            if isinstance(exc, WebServerError):
                raise HubCliError(str(exc)) from None
            raise
        web_thread = threading.Thread(target=server.run, name="hub-web", daemon=True)
        try:
            feed.start()
            resender.start()
            web_thread.start()
            rounds = ledger.admin.rounds()
            if rounds:  # a broker slow to take them is logged, never fatal
                ingest.republish_round(rounds[-1][0])
            for table in ledger.tables.names():
                for first, last in ledger.events.gaps(table):
                    log.warning("table %s: events %d to %d missing", table, first, last)
            print(f"hub serving event {args.event} from {link.address} into {ledger.path}",
                  flush=True)
            print(serving_line(server.host, server.port, server.url), flush=True)
            stop.wait()
        finally:
            server.close()
            resender.stop()
            feed.stop()
            ingest.stop()
    return 0


def serving_line(host: str, port: int, url: str) -> str:
    """What the hub says it serves on: ``url`` (for this machine), and, when it listens
    on every address, that it does (issue 19, finding 16: "http://127.0.0.1:8088/"
    alone would say only this machine can reach it)."""
    if host in ("0.0.0.0", "::", ""):
        return (f"hub web on {url} (listening on every address of this machine, port {port}:"
                f" from another machine use its name or address)")
    return f"hub web on {url}"


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


def _players(args: argparse.Namespace) -> int:
    with _ledger(args) as ledger:
        if args.action == "add":
            ledger.admin.add_player(args.name, args.rating)
        elif args.action == "import":
            try:
                text = Path(args.file).read_text(encoding="utf-8")
            except OSError as exc:
                raise HubCliError(f"cannot read {args.file}: {exc.strerror}") from None
            print(f"{len(ledger.admin.import_players_csv(text))} player(s) added")
        elif args.action == "withdraw":
            ledger.admin.withdraw(args.name, args.who)
        for p in ledger.admin.seeded() if args.action == "list" else []:
            print(f"{p.name}\t{p.rating}" + ("\twithdrawn" if p.withdrawn else ""))
    return 0


def _pair(args: argparse.Namespace) -> int:
    with _ledger(args) as ledger:
        try:
            pairings = ledger.admin.pair_round(args.system)
        except NoLegalPairingError as exc:
            print(f"{exc}\npair it by hand: gg-arbiter hub pair-manual --game WHITE BLACK ..."
                  " [--bye NAME]", file=sys.stderr)
            return 1
        _print_round(pairings)
    return 0


def _print_round(pairings: Sequence[Pairing]) -> None:
    for p in pairings:
        print(f"round {p.round} board {p.board}: {p.white} - {p.black or '(bye)'}")


def _pair_manual(args: argparse.Namespace) -> int:
    games: list[tuple[str, str | None]] = [(w, b) for w, b in args.game or []]
    games += [(n, None) for n in args.bye or []]
    with _ledger(args) as ledger:
        _print_round(ledger.admin.pair_manual(games, args.who))
    return 0


def _rounds(args: argparse.Namespace) -> int:
    with _ledger(args) as ledger:
        if args.rounds is not None:
            ledger.admin.set_total_rounds(args.rounds, args.who)
        total = ledger.admin.total_rounds()
        print(f"{len(ledger.admin.rounds())} round(s) paired of {total if total else '(not set)'}")
    return 0


def _import_trf(args: argparse.Namespace) -> int:
    try:
        text = Path(args.file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise HubCliError(f"cannot read {args.file}: {exc}") from None
    event = import_trf(text)
    with _ledger(args) as ledger:
        ledger.admin.import_event(event.players, event.games, event.total_rounds)
        rounds = len(ledger.admin.rounds())
    print(f"{len(event.players)} player(s), {rounds} round(s) of {event.total_rounds} imported")
    return 0


def _assign(args: argparse.Namespace) -> int:
    with _ledger(args) as ledger:
        payload = ledger.admin.assign_table(args.round, args.board, args.table, args.who)
    if args.broker:
        _publish_once(args, {args.table: payload})
    print(f"round {args.round} board {args.board} -> table {args.table}")
    return 0


def _assign_round(args: argparse.Namespace) -> int:
    """Every board of a round not yet at a table to its suggested one (board n: the n-th
    table heard of), as the organiser page fills them in."""
    with _ledger(args) as ledger:
        suggested = suggested_tables(ledger, args.round)
        current = {r.pairing.board: r.table for r in ledger.admin.pairings(args.round)}
        payloads = {}
        for board, table in suggested.items():
            if table is None or current.get(board) is not None:
                continue
            payloads[table] = ledger.admin.assign_table(args.round, board, table, args.who)
            print(f"round {args.round} board {board} -> table {table}")
    missing = [b for b, t in suggested.items() if t is None]
    if args.broker and payloads:
        _publish_once(args, payloads)
    if missing:
        print(f"no table to suggest for board(s) {', '.join(map(str, missing))}: "
              "assign them by name", file=sys.stderr)
        return 1
    return 0


def _publish(args: argparse.Namespace) -> int:
    with _ledger(args) as ledger:
        payloads = ledger.admin.assignments(args.round)
    if not args.broker:
        raise HubCliError("gg-arbiter hub publish: give --broker URL")
    _publish_once(args, dict(payloads))
    print(f"{len(payloads)} assignment(s) of round {args.round} published")
    return 0


def _result(args: argparse.Namespace) -> int:
    with _ledger(args) as ledger:
        ledger.admin.correct_result(args.round, args.board, RESULTS[args.result], args.who)
    return 0


def _tiebreaks(args: argparse.Namespace) -> int:
    with _ledger(args) as ledger:
        ledger.admin.set_tiebreaks([TieBreak(t) for t in args.names], args.who)
    return 0


def _export(args: argparse.Namespace) -> int:
    with _ledger(args) as ledger:
        if args.kind == "trf":
            sys.stdout.write(trf(ledger))
        else:
            sys.stdout.write(export(ledger, args.kind, args.format))
    return 0


def _archive(args: argparse.Namespace) -> int:
    with _ledger(args) as ledger:
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
    with _ledger(args) as ledger:
        for c in ledger.admin.audit():
            print(f"{c.at}\t{c.who}\t{c.what}\t{c.target}\t{c.before} -> {c.after}")
    return 0


def _gaps(args: argparse.Namespace) -> int:
    if args.resend and not args.broker:
        raise HubCliError("gg-arbiter hub gaps --resend needs --broker URL")
    with _ledger(args) as ledger:
        out = {t: runs for t in ledger.tables.names() if (runs := ledger.tables.missing(t))}
        asks = [ledger.events.ask_resend(t, runs) for t, runs in out.items()] if args.resend else []
        refused = ledger.events.rejections()
        in_all = sum(ledger.events.refused().values())
    if not out:
        print("no table has events missing")
    for table, runs in out.items():
        spans = ", ".join(f"{a}" if a == b else f"{a} to {b}" for a, b in runs)
        count = sum(b - a + 1 for a, b in runs)
        print(f"table {table}: {count} event{'' if count == 1 else 's'} missing ({spans})")
    # Messages refused (not the wire format, another table's name...): never among the
    # missing, so said apart, on stderr (stdout says what is missing).
    for at, table, seq, why in refused[-20:]:
        print(f"refused {at} table {table}" + (f" seq {seq}" if seq else "") + f": {why}",
              file=sys.stderr)
    if in_all > 20:
        print(f"({in_all} refused in all; the organiser page lists the latest 50)",
              file=sys.stderr)
    if asks:
        _publish_once(args, {}, asks)
        for ask in asks:
            print(f"table {ask.table}: resend asked (request {ask.id})")
    return 1 if out else 0


def _silent(args: argparse.Namespace) -> int:
    with _ledger(args) as ledger:
        silent = ledger.tables.silent(timedelta(minutes=args.quiet))
    for table, why in silent:
        print(f"{table}\t{why}")
    return 1 if silent else 0


#: The longest span a --*-after option takes, in its unit (a week of minutes).
MAX_SPAN = 7 * 24 * 60.0


def _span(text: str) -> float:
    """A span of time of 0 to MAX_SPAN (argparse answers a bad one with exit 2)."""
    value = float(text)  # ValueError: argparse's "invalid _span value"
    if not 0 <= value <= MAX_SPAN:  # also NaN and inf
        raise argparse.ArgumentTypeError(f"{text!r} is not from 0 to {MAX_SPAN:g}")
    return value


def add_hub_parser(sub: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    """Add ``hub`` and its subcommands to the ``gg-arbiter`` subparsers ``sub``."""
    hub = sub.add_parser("hub", help="the tournament hub: serve an event, or script its ledger")
    hub.add_argument("--event", required=True, metavar="SLUG", help="the event's short name")
    hub.add_argument("--data", metavar="DIR", help="directory of the ledger (hub.sqlite)")
    hub.add_argument("--broker", metavar="URL",
                     help="MQTT broker, mqtt://[USER[:PASSWORD]@]HOST[:1883] or, with TLS, "
                          "mqtts://[USER[:PASSWORD]@]HOST[:8883]")
    hub.add_argument("--ca-file", metavar="PATH",
                     help="for mqtts://: the CA certificate that signed the broker's "
                          "(default: the system's trust store)")
    hub.add_argument("--password-file", metavar="FILE",
                     help="the broker password of the URL's user (e.g. secrets/hub.password)")
    hub.add_argument("--connect-timeout", type=float, default=10.0, help=argparse.SUPPRESS)
    hub.add_argument("--host", default="0.0.0.0", help="web address to serve on (default all)")
    hub.add_argument("--port", type=int, default=DEFAULT_WEB_PORT,
                     help=f"web port (default {DEFAULT_WEB_PORT}; 0 picks a free one)")
    hub.add_argument("--resend-after", type=_span, default=GRACE, metavar="SECONDS",
                     help="ask a table to resend events missing for this long "
                          f"(default {GRACE:g})")
    hub.add_argument("--silent-after", type=_span, default=10.0, metavar="MINUTES",
                     help="flag a table of the round with no event for this long (default 10)")
    hub.set_defaults(func=_serve)
    cmds = hub.add_subparsers(dest="hub_command", metavar="SUBCOMMAND", parser_class=parser_class)

    def who(p: argparse.ArgumentParser) -> None:
        p.add_argument("--who", default="organiser", help="name kept in the audit log")

    players = cmds.add_parser("players", help="add, import, withdraw or list players")
    pl = players.add_subparsers(dest="action", required=True, parser_class=parser_class)
    add = pl.add_parser("add")
    add.add_argument("name")
    add.add_argument("--rating", type=int, default=0)
    imp = pl.add_parser("import", help="a CSV file with a header: name[,rating]")
    imp.add_argument("file")
    wd = pl.add_parser("withdraw")
    wd.add_argument("name")
    who(wd)
    pl.add_parser("list")
    players.set_defaults(func=_players)

    pair = cmds.add_parser("pair", help="pair the next round")
    pair.add_argument("--system", choices=("swiss", "round-robin"), default="swiss")
    pair.set_defaults(func=_pair)

    manual = cmds.add_parser(
        "pair-manual", help="pair the next round by hand (audited), e.g. when no legal "
        "Swiss pairing exists")
    manual.add_argument("--game", nargs=2, action="append", metavar=("WHITE", "BLACK"),
                        help="one board; repeat for each")
    manual.add_argument("--bye", action="append", metavar="NAME", help="a player with a bye")
    who(manual)
    manual.set_defaults(func=_pair_manual)

    rounds = cmds.add_parser(
        "rounds", help="show, or set, the event's number of rounds (the final round's Swiss "
        "pairing and the TRF export read it)")
    rounds.add_argument("rounds", type=int, nargs="?")
    who(rounds)
    rounds.set_defaults(func=_rounds)

    trf_in = cmds.add_parser(
        "import-trf", help="load a FIDE TRF file (players, ratings, rounds played) into a "
        "new, empty event")
    trf_in.add_argument("file")
    trf_in.set_defaults(func=_import_trf)

    assign = cmds.add_parser("assign", help="send a board to a table (published with --broker)")
    assign.add_argument("round", type=int)
    assign.add_argument("board", type=int)
    assign.add_argument("table")
    who(assign)
    assign.set_defaults(func=_assign)

    assign_round = cmds.add_parser(
        "assign-round", help="send each board of a round not yet at a table to the n-th "
        "table heard of (published with --broker)")
    assign_round.add_argument("round", type=int)
    who(assign_round)
    assign_round.set_defaults(func=_assign_round)

    publish = cmds.add_parser("publish", help="publish a round's assignments (needs --broker)")
    publish.add_argument("round", type=int)
    publish.set_defaults(func=_publish)

    result = cmds.add_parser("result", help="correct a result (audited)")
    result.add_argument("round", type=int)
    result.add_argument("board", type=int)
    result.add_argument("result", choices=sorted(RESULTS))
    who(result)
    result.set_defaults(func=_result)

    breaks = cmds.add_parser("tiebreaks", help="choose the tie-breaks, in order")
    breaks.add_argument("names", nargs="+", choices=[t.value for t in TieBreak])
    who(breaks)
    breaks.set_defaults(func=_tiebreaks)

    exp = cmds.add_parser(
        "export", help="standings, pairings or games as CSV or JSON; trf: the event as a FIDE "
        "TRF file")
    exp.add_argument("kind", choices=(*KINDS, "trf"))
    exp.add_argument("--format", choices=("csv", "json"), default="csv")
    exp.set_defaults(func=_export)

    archive = cmds.add_parser("archive", help="the whole event as JSON: export, or import")
    archive.add_argument("action", choices=("export", "import"))
    archive.add_argument("file")
    archive.set_defaults(func=_archive)

    pin = cmds.add_parser("set-pin", help="set the organiser PIN of the hub's web pages")
    pin.add_argument("pin", nargs="?", help=f"{PIN_RULE} (asked for when left out)")
    pin.set_defaults(func=_set_pin)

    cmds.add_parser("audit", help="print the audit log").set_defaults(func=_audit)
    gaps = cmds.add_parser("gaps", help="missing table events (exit 1 if any)")
    gaps.add_argument("--resend", action="store_true",
                      help="ask each table with missing events to publish them again "
                           "(needs --broker)")
    gaps.set_defaults(func=_gaps)
    silent = cmds.add_parser(
        "silent", help="tables of the round offline or quiet with a game on (exit 1 if any)"
    )
    silent.add_argument("--quiet", type=_span, default=10.0, metavar="MINUTES",
                        help="no event for this long counts as silent (default 10)")
    silent.set_defaults(func=_silent)
