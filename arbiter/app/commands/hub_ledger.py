"""``gg-arbiter hub SUBCOMMAND``: script the event's ledger (players, pairing,
assignments, corrections), each subcommand beside its handler; what reads the ledger out
(exports, archives, the audit log, gaps, silent tables) is :mod:`.hub_reports`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from arbiter.app.commands.hub_common import RESULTS, open_ledger, publish_once_to_broker
from arbiter.app.errors import HubCliError
from arbiter.hub.unplayed import BYE_POINTS, FORFEIT_SIDES
from arbiter.tournament.errors import NoLegalPairingError
from arbiter.tournament.model import Pairing
from arbiter.tournament.names import MAX_NAME_LENGTH
from arbiter.tournament.standings import TieBreak
from arbiter.tournament.trf import TrfEvent, import_trf, read_trf_file
from web.hub.views import suggested_tables


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


def _who(p: argparse.ArgumentParser) -> None:
    p.add_argument("--who", default="organiser", help="name kept in the audit log")


def register(cmds: Any, parser_class: type[argparse.ArgumentParser]) -> None:
    """Add the ledger's subcommands to ``hub``'s subparsers ``cmds``."""
    _register_players(cmds, parser_class)
    _register_pairing(cmds)
    _register_assignments(cmds)
    _register_corrections(cmds)


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
