"""``gg-arbiter hub SUBCOMMAND``: script the event's ledger (players, pairing,
assignments, corrections, exports, archives), each subcommand beside its handler."""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from arbiter.app.commands.hub_common import RESULTS, open_ledger, publish_once_to_broker, span
from arbiter.app.errors import HubCliError
from arbiter.errors import PinFormatError
from arbiter.hub.exports import KINDS, export, trf
from arbiter.hub.unplayed import BYE_POINTS, FORFEIT_SIDES
from arbiter.pinrule import RULE as PIN_RULE
from arbiter.pinrule import legacy_pin_note
from arbiter.storage.paths import default_data_dir
from arbiter.tournament.errors import NoLegalPairingError
from arbiter.tournament.model import Pairing
from arbiter.tournament.names import MAX_NAME_LENGTH
from arbiter.tournament.standings import TieBreak
from arbiter.tournament.trf import TrfEvent, import_trf, read_trf_file
from web.hub.views import suggested_tables
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


def _players(args: argparse.Namespace) -> int:
    with open_ledger(args) as ledger:
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
    with open_ledger(args) as ledger:
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
    with open_ledger(args) as ledger:
        _print_round(ledger.admin.pair_manual(games, args.who))
    return 0


def _rounds(args: argparse.Namespace) -> int:
    with open_ledger(args) as ledger:
        if args.rounds is not None:
            ledger.admin.set_total_rounds(args.rounds, args.who)
        total = ledger.admin.total_rounds()
        print(f"{len(ledger.admin.rounds())} round(s) paired of {total if total else '(not set)'}")
    return 0


def _import_trf(args: argparse.Namespace) -> int:
    # Read bounded (TRF's MAX_FILE_BYTES), checked whole before the ledger is opened.
    event = import_trf(read_trf_file(Path(args.file)))
    with open_ledger(args) as ledger:
        ledger.unplayed.import_event(event.players, event.games,
                                     event.total_rounds if event.announced else None)
        rounds = len(ledger.admin.rounds())
    print(f"{len(event.players)} player(s), {rounds} round(s) {imported_of(event)} imported")
    return 0


def imported_of(event: TrfEvent) -> str:
    """What an import says of the event's length: "of 9", or that the file gave none."""
    if event.announced:
        return f"of {event.total_rounds}"
    return "(the file gives no number of rounds (XXR): set it with gg-arbiter hub rounds N)"


def _assign(args: argparse.Namespace) -> int:
    with open_ledger(args) as ledger:
        payload = ledger.admin.assign_table(args.round, args.board, args.table, args.who)
    if args.broker:
        publish_once_to_broker(args, {args.table: payload})
    print(f"round {args.round} board {args.board} -> table {args.table}")
    return 0


def _assign_round(args: argparse.Namespace) -> int:
    """Every board of a round not yet at a table to its suggested one (board n: the n-th
    table heard of), as the organiser page fills them in."""
    with open_ledger(args) as ledger:
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
        publish_once_to_broker(args, payloads)
    if missing:
        print(f"no table to suggest for board(s) {', '.join(map(str, missing))}: "
              "assign them by name", file=sys.stderr)
        return 1
    return 0


def _publish(args: argparse.Namespace) -> int:
    with open_ledger(args) as ledger:
        payloads = ledger.admin.assignments(args.round)
    if not args.broker:
        raise HubCliError("gg-arbiter hub publish: give --broker URL")
    publish_once_to_broker(args, dict(payloads))
    print(f"{len(payloads)} assignment(s) of round {args.round} published")
    return 0


def _result(args: argparse.Namespace) -> int:
    with open_ledger(args) as ledger:
        ledger.admin.correct_result(args.round, args.board, RESULTS[args.result], args.who)
    return 0


def _forfeit(args: argparse.Namespace) -> int:
    with open_ledger(args) as ledger:
        ledger.unplayed.forfeit(args.round, args.board, FORFEIT_SIDES[args.came], args.who)
    said = "neither came" if args.came == "none" else f"{args.came} wins by forfeit"
    print(f"round {args.round} board {args.board}: {said}")
    return 0


def _bye(args: argparse.Namespace) -> int:
    with open_ledger(args) as ledger:
        number = args.round if args.round is not None else len(ledger.admin.rounds()) + 1
        if args.cancel:
            ledger.unplayed.cancel_bye(args.name, number, args.who)
            print(f"{args.name}: no bye in round {number}")
        else:
            ledger.unplayed.request_bye(args.name, number, args.who, BYE_POINTS[args.points])
            print(f"{args.name}: a {args.points}-point bye in round {number}, not paired")
        for g in ledger.unplayed.byes():
            if g.pairing.round > len(ledger.admin.rounds()):
                print(f"  round {g.pairing.round}: {g.pairing.white} ({g.bye.value})")
    return 0


def _tiebreaks(args: argparse.Namespace) -> int:
    with open_ledger(args) as ledger:
        ledger.admin.set_tiebreaks([TieBreak(t) for t in args.names], args.who)
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
        publish_once_to_broker(args, {}, asks)
        for ask in asks:
            print(f"table {ask.table}: resend asked (request {ask.id})")
    return 1 if out else 0


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


def _who(p: argparse.ArgumentParser) -> None:
    p.add_argument("--who", default="organiser", help="name kept in the audit log")


def register(cmds: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    """Add the ledger's subcommands to ``hub``'s subparsers ``cmds``."""
    _register_players(cmds, parser_class)
    _register_pairing(cmds)
    _register_assignments(cmds)
    _register_corrections(cmds)
    _register_reports(cmds)


def _register_players(cmds: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    players = cmds.add_parser("players", help="add, import, withdraw or list the event's players")
    pl = players.add_subparsers(dest="action", required=True, metavar="ACTION",
                                parser_class=parser_class)
    add = pl.add_parser("add", help="register one player")
    add.add_argument("name", help=f"the player's name (at most {MAX_NAME_LENGTH} characters,"
                     " no control or invisible character: the rule of TRF, CSV and the API)")
    add.add_argument("--rating", type=int, default=0, help="rating, 0 to 9999 (default 0)")
    imp = pl.add_parser("import", help="register the players of a CSV file with a header "
                        "line: name[,rating] (all or none)")
    imp.add_argument("file", help="the CSV file (UTF-8)")
    wd = pl.add_parser("withdraw", help="take a player out of the rounds still to pair "
                       "(audited; games played still count)")
    wd.add_argument("name", help="the player's name, as registered")
    _who(wd)
    pl.add_parser("list", help="print the players in seed order: name, rating, withdrawn")
    players.set_defaults(func=_players)


def _register_pairing(cmds: Any) -> None:
    pair = cmds.add_parser("pair", help="pair the next round (refused past the event's "
                           "length: extend it with rounds N)")
    pair.add_argument("--system", choices=("swiss", "round-robin"), default="swiss",
                      help="Swiss (FIDE Dutch, the default) or a round robin (Berger tables)")
    pair.set_defaults(func=_pair)

    manual = cmds.add_parser(
        "pair-manual", help="pair the next round by hand (audited), e.g. when no legal "
        "Swiss pairing exists")
    manual.add_argument("--game", nargs=2, action="append", metavar=("WHITE", "BLACK"),
                        help="one board; repeat for each")
    manual.add_argument("--bye", action="append", metavar="NAME", help="a player with a bye")
    _who(manual)
    manual.set_defaults(func=_pair_manual)

    rounds = cmds.add_parser(
        "rounds", help="show, or set, the event's length: its number of rounds (audited; no "
        "round is paired past it; the final round's Swiss pairing and the TRF's XXR read it)")
    rounds.add_argument("rounds", type=int, nargs="?", metavar="N",
                        help="the number of rounds, from the rounds paired to 1000 (left "
                             "out: show it)")
    _who(rounds)
    rounds.set_defaults(func=_rounds)

    trf_in = cmds.add_parser(
        "import-trf", help="load a FIDE TRF file (players, ratings, rounds played, XXR the "
        "number of rounds) into a new, empty event")
    trf_in.add_argument("file", help="the TRF file (UTF-8, at most 4 MB)")
    trf_in.set_defaults(func=_import_trf)


def _register_assignments(cmds: Any) -> None:
    assign = cmds.add_parser("assign", help="send a board to a table (published with --broker)")
    assign.add_argument("round", type=int, help="the round's number")
    assign.add_argument("board", type=int, help="the board's number in the round")
    assign.add_argument("table", help="the table's name, as it joined the venue")
    _who(assign)
    assign.set_defaults(func=_assign)

    assign_round = cmds.add_parser(
        "assign-round", help="send each board of a round not yet at a table to the n-th "
        "table heard of (published with --broker)")
    assign_round.add_argument("round", type=int, help="the round's number")
    _who(assign_round)
    assign_round.set_defaults(func=_assign_round)

    publish = cmds.add_parser("publish", help="publish a round's assignments (needs --broker)")
    publish.add_argument("round", type=int, help="the round's number")
    publish.set_defaults(func=_publish)


def _register_corrections(cmds: Any) -> None:
    result = cmds.add_parser("result", help="correct a result (audited); later table events "
                             "no longer change it")
    result.add_argument("round", type=int, help="the round's number")
    result.add_argument("board", type=int, help="the board's number in the round")
    result.add_argument("result", choices=sorted(RESULTS),
                        help="1-0, 0-1, 1/2-1/2, or none (no result)")
    _who(result)
    result.set_defaults(func=_result)

    forfeit = cmds.add_parser(
        "forfeit", help="record that a board's game was not played (audited): the side who "
        "came wins by forfeit; none: neither came, both lose")
    forfeit.add_argument("round", type=int, help="the round of the board")
    forfeit.add_argument("board", type=int, help="the board whose game was not played")
    forfeit.add_argument("came", choices=tuple(FORFEIT_SIDES), metavar="CAME",
                         help="white, black or none: who came to the board")
    _who(forfeit)
    forfeit.set_defaults(func=_forfeit)

    bye = cmds.add_parser(
        "bye", help="give a player a bye for a coming round (audited): not paired that "
        "round, half a point unless --points says otherwise; lists the byes to come")
    bye.add_argument("name", help="the player given the bye")
    bye.add_argument("--round", type=int, help="the round (default: the next to pair)")
    bye.add_argument("--points", choices=tuple(BYE_POINTS), default="0.5",
                     help="0.5 (H, the default), 0 (Z) or 1 (F)")
    bye.add_argument("--cancel", action="store_true", help="take the bye back")
    _who(bye)
    bye.set_defaults(func=_bye)

    breaks = cmds.add_parser("tiebreaks", help="choose the tie-breaks, in order")
    breaks.add_argument("names", nargs="+", choices=[t.value for t in TieBreak],
                        metavar="TIEBREAK", help="one or more of: "
                        + ", ".join(t.value for t in TieBreak))
    _who(breaks)
    breaks.set_defaults(func=_tiebreaks)


def _register_reports(cmds: Any) -> None:
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
    gaps = cmds.add_parser("gaps", help="missing table events (exit 1 if any)")
    gaps.add_argument("--resend", action="store_true",
                      help="ask each table with missing events to publish them again "
                           "(needs --broker)")
    gaps.set_defaults(func=_gaps)
    silent = cmds.add_parser(
        "silent", help="tables of the round offline or quiet with a game on (exit 1 if any)"
    )
    silent.add_argument("--quiet", type=span, default=10.0, metavar="MINUTES",
                        help="no event for this long counts as silent (default 10)")
    silent.set_defaults(func=_silent)
