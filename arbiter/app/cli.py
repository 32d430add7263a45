"""The ``gg-arbiter`` command line."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from arbiter import __version__
from arbiter.app.config import Config, ConfigError, load_config
from arbiter.device.arbiter import Arbiter
from arbiter.errors import ArbiterError
from arbiter.hardware.pins import PinSetupError
from arbiter.rules.game import EndingError, EndingKind, Game
from arbiter.rules.pieces import Piece, PieceError, parse_rank, parse_side
from arbiter.rules.ranks import Rank, Side
from arbiter.rules.verdict import resolve
from arbiter.storage.journal import (
    CorruptDataError,
    GameStore,
    StoreError,
    StoreLockedError,
    list_game_ids,
    read_game,
)
from arbiter.storage.paths import default_config_path, default_data_dir
from arbiter.tunes.defaults import load_tunes


class CliError(ArbiterError):
    """A user error: printed as one line, exit status 2."""


class DataInUseError(CliError):
    """Another gg-arbiter (the running service) holds the data directory."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise CliError(f"{self.prog}: {message}")


def _judged_rank(text: str) -> tuple[Side | None, Rank]:
    """A rank (``5*g``, ``spy``) or a piece (``W:5*G``, as the README writes them)."""
    if ":" in text:
        piece = Piece.parse(text)
        return piece.side, piece.rank
    return None, parse_rank(text)


def _cmd_judge(args: argparse.Namespace) -> int:
    try:
        attacker_side, attacker = _judged_rank(args.attacker)
        defender_side, defender = _judged_rank(args.defender)
    except PieceError as exc:
        raise CliError(str(exc)) from None
    if attacker_side is not None and attacker_side is defender_side:
        # The device refuses such a pair (a piece never challenges its own side).
        raise CliError(
            f"refused: {args.attacker} and {args.defender} are both {attacker_side.title}; "
            "a challenge is between a White and a Black piece"
        )
    verdict = resolve(attacker, defender)
    if args.json:
        print(
            json.dumps(
                {
                    "attacker": attacker.code,
                    "defender": defender.code,
                    "survivor": verdict.survivor.value,
                    "flag_fell": verdict.flag_fell,
                    "fallen_flag": verdict.fallen_flag.value if verdict.fallen_flag else None,
                }
            )
        )
    else:
        words = {
            "attacker": f"attacker ({attacker.full_name}) survives",
            "defender": f"defender ({defender.full_name}) survives",
            "none": "split: both are eliminated",
        }
        line = words[verdict.survivor.value]
        if verdict.flag_fell:
            line += "; a Flag fell: game over"
        print(line)
    return 0


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port must be 0 to 65535, not {port}")
    return port


def _ask_pin(prompt: str, hint: str) -> str:
    """Ask for a PIN at the terminal; with none, fail with ``hint`` (how to give it)."""
    import getpass
    import warnings

    # getpass falls back to standard input with a GetPassWarning when there is
    # no terminal (a script, cron, systemd): a PIN must not be read that way.
    try:
        os.close(os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY))
    except OSError:
        raise CliError(f"no PIN given and no terminal to ask for it: {hint}") from None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", getpass.GetPassWarning)
        try:
            return getpass.getpass(prompt)
        except (EOFError, OSError):
            raise CliError(f"no PIN given: {hint}") from None


def _build(config: Config, sim: bool) -> Arbiter:
    """The device for run/selftest, with every set-up failure as one clear line."""
    from arbiter.app.assembly import build_arbiter

    try:
        return build_arbiter(config, sim=sim)
    except PinSetupError as exc:
        raise CliError(str(exc)) from None
    except StoreLockedError as exc:
        raise DataInUseError(f"cannot start: {exc}") from None
    except (ArbiterError, OSError) as exc:
        raise CliError(f"cannot start: {exc}") from None


def _data_dir(args: argparse.Namespace) -> Path:
    if args.data:
        return Path(args.data)
    path = default_config_path()
    if path is None:
        return default_data_dir()
    try:
        return load_config(path).data_dir
    except ConfigError as exc:
        raise CliError(str(exc)) from None


def _describe(game: Game) -> str:
    view = game.public_view()
    if game.ending is None:
        status = "in progress"
    else:
        winner = game.ending.winner
        status = game.ending.kind.value.replace("_", " ")
        status += f", {winner.title} won" if winner else ""
    return (
        f"game {game.id}: {status}; {view['challenge_count']} challenge(s); "
        f"eliminated W {view['eliminated']['W']}, B {view['eliminated']['B']}"
    )


def _cmd_record(args: argparse.Namespace) -> int:
    data = _data_dir(args)
    ids = list_game_ids(data)
    if not ids:
        raise CliError(f"no games recorded in {data}")
    game_id = args.game_id if args.game_id is not None else ids[-1]
    try:
        game = read_game(data, game_id)
    except CorruptDataError as exc:
        intact = len(exc.valid.challenges) if exc.valid else 0
        raise CliError(f"{exc} ({intact} challenge(s) before it are intact)") from None
    except StoreError as exc:
        raise CliError(str(exc)) from None
    if args.json:
        print(json.dumps(game.full_record() if game.over else game.public_view(), indent=2))
        return 0
    print(_describe(game))
    if not game.over:
        for v in game.public_view()["verdicts"]:
            print(f"  {v['number']:3d}. {v['attacker_side']} attacks: {v['result']}")
        print("  (ranks stay secret until the game is over)")
        return 0
    for c in game.challenges:
        survivor = c.verdict.survivor.public_word
        flag = "  Flag fell" if c.verdict.flag_fell else ""
        print(f"  {c.number:3d}. {c.attacker} attacks {c.defender}: {survivor}{flag}")
    return 0


def _load_config(args: argparse.Namespace) -> Config:
    path = getattr(args, "config", None) or default_config_path()
    try:
        return load_config(path, data_dir=getattr(args, "data", None))
    except ConfigError as exc:
        raise CliError(str(exc)) from None


def _choose_sim(args: argparse.Namespace, config: Config) -> bool:
    if getattr(args, "sim", False) or config.reader.kind == "sim":
        return True
    from arbiter.hardware.pins import hardware_available

    if not hardware_available():
        print("No GPIO hardware here (not a Raspberry Pi): running the simulator.",
              file=sys.stderr)
        return True
    return False


def _cmd_run(args: argparse.Namespace) -> int:
    config = _load_config(args)
    if args.script:
        args.sim = True  # a script plays the simulator's slots
    sim = _choose_sim(args, config)
    from arbiter.app.service import serve, stdin_or_none

    if args.broker is not None or args.event is not None or args.table is not None:
        from dataclasses import replace

        from arbiter.fleet.settings import SettingsError

        try:
            tournament = config.tournament.override(
                broker=args.broker, event=args.event, table=args.table)
        except SettingsError as exc:
            raise CliError(str(exc)) from None
        config = replace(config, tournament=tournament)
    host = args.host or config.web.host
    port = args.port if args.port is not None else config.web.port
    started = time.monotonic()
    if not args.script:
        arbiter = _build(config, sim)
        return serve(config, arbiter, host=host, port=port, stdin=stdin_or_none(),
                     started=started)
    try:
        script = open(args.script, encoding="utf-8")  # noqa: SIM115 (closed below)
    except OSError as exc:
        raise CliError(f"cannot read the script {args.script}: {exc.strerror}") from None
    with script:
        arbiter = _build(config, sim)
        return serve(config, arbiter, host=host, port=port, stdin=script, started=started)


def _cmd_tune(args: argparse.Namespace) -> int:
    config = _load_config(args)
    tunes = load_tunes(config.tunes)
    if args.list or not args.name:
        for name, each in tunes.items():
            print(f"{name:8s} {each.duration:5.2f} s  {len(each.notes):3d} notes  "
                  f"{config.tunes[name]}")
        return 0
    tune = tunes.get(args.name)
    if tune is None:
        raise CliError(f"no tune {args.name!r}; tunes: {', '.join(tunes)}")
    if args.wav:
        from arbiter.tunes.wav import render

        try:
            render(tune, args.wav)
        except OSError as exc:
            raise CliError(f"cannot write {args.wav}: {exc}") from None
        print(f"wrote {args.wav}: {tune.duration:.2f} s, {len(tune.notes)} notes")
        return 0
    from arbiter.app.assembly import build_signals
    from arbiter.hardware.pins import hardware_available

    if not hardware_available():
        for note in tune.notes:
            pitch = f"{note.name} {note.frequency:7.2f} Hz" if note.frequency else "rest"
            print(f"  {pitch:>18s}  {note.seconds:.3f} s")
        print(f"No buzzer here (not a Raspberry Pi): hear it with --wav {args.name}.wav")
        return 0
    signals = build_signals(config, None)
    try:
        signals.play(args.name)
    finally:
        signals.close()
    return 0


def _cmd_selftest(args: argparse.Namespace) -> int:
    config = _load_config(args)
    sim = _choose_sim(args, config)
    from arbiter.device.arbiter import DeviceError

    unknown = [name for name in args.tune or () if name not in config.tunes]
    if unknown:
        raise CliError(f"no tune {unknown[0]!r}; tunes: {', '.join(config.tunes)}")
    try:
        arbiter = _build(config, sim)
    except DataInUseError:
        # The running arbiter owns the LEDs, buzzer and slots: its page runs the test.
        raise CliError(
            f"the arbiter is running (it holds {config.data_dir}): run its self-test on "
            f"the admin page, http://127.0.0.1:{config.web.port}/admin, 'Run the self-test' "
            "(between games), or stop it (sudo systemctl stop gg-arbiter) and run "
            "gg-arbiter selftest again"
        ) from None
    except CliError as exc:
        print(f"FAIL: {exc}")
        return 1
    try:
        arbiter.start()
        time.sleep(args.settle)  # let each reader report (a missing port reports a fault)
        print(f"self-test ({'simulator' if sim else config.reader.kind}):")
        try:
            lines = arbiter.selftest(tunes=args.tune or None, force=True)
        except DeviceError as exc:
            raise CliError(str(exc)) from None
        for line in lines:
            print(f"  {line}")
        faults = arbiter.reader_faults()
        for fault in faults:
            print(f"FAIL: reader {fault}")
        print("FAIL" if faults else "PASS")
        return 1 if faults else 0
    finally:
        arbiter.close()


def _cmd_enroll(args: argparse.Namespace) -> int:
    config = _load_config(args)
    if config.reader.kind not in ("rdm6300", "mcu"):
        raise CliError(
            f"enrollment is for RFID readers; reader.kind is {config.reader.kind!r}"
            " (set it to rdm6300 or mcu)"
        )
    from arbiter.app.assembly import build_readers
    from arbiter.app.enroll_console import run_enrollment_console
    from arbiter.device.enrollment import EnrollmentSession
    from arbiter.rules.army import PhysicalPiece

    try:
        only = PhysicalPiece.parse(args.piece) if args.piece else None
        readers, _identifier, registry, _slots = build_readers(config, None, sim=False)
        assert registry is not None  # rdm6300 and mcu readers read tags
        session = EnrollmentSession(registry, only=only)
    except (ArbiterError, ValueError) as exc:
        raise CliError(str(exc)) from None
    reader = next(r for r in readers if session.slot in r.slots)
    for other in readers:
        if other is not reader:
            other.close()
    done, total = run_enrollment_console(session, reader)
    print(f"enrolled {done} of {total} pieces; tags in {registry.path}")
    return 0


_REASONS = {"flag_home": EndingKind.FLAG_HOME, "resignation": EndingKind.RESIGNATION,
            "draw": EndingKind.DRAW}


def _cmd_end(args: argparse.Namespace) -> int:
    config = _load_config(args)
    kind = _REASONS[args.reason]
    winner = None
    if args.winner:
        try:
            winner = parse_side(args.winner)
        except PieceError as exc:
            raise CliError(str(exc)) from None
    if kind.has_winner and winner is None:
        raise CliError(f"--reason {args.reason} needs --winner W or B")
    try:
        store = GameStore(config.data_dir)
    except StoreLockedError:
        return _end_through_service(config, args, winner)
    except StoreError as exc:
        raise CliError(str(exc)) from None
    with store:
        try:
            store.declare_end(kind, winner)
        except EndingError as exc:
            raise CliError(str(exc)) from None
        print(f"game {store.current.id} ended: {args.reason}"
              + (f", {winner.title} wins" if winner else ""))
    return 0


def _end_through_service(config: Config, args: argparse.Namespace, winner: Side | None) -> int:
    """The arbiter is running: ask it over its local API (it holds the record)."""
    import urllib.error
    import urllib.request

    pin = args.pin or os.environ.get("GG_ARBITER_PIN") or _ask_pin(
        "Admin PIN: ", "pass --pin PIN or set GG_ARBITER_PIN"
    )
    base = f"http://127.0.0.1:{args.port if args.port is not None else config.web.port}"
    try:
        with urllib.request.urlopen(f"{base}/api/status", timeout=5) as reply:
            game_id = json.load(reply)["game_id"]
        body = json.dumps(
            {"reason": args.reason, "winner": winner.letter if winner else None}
        )
        request = urllib.request.Request(
            f"{base}/api/games/{game_id}/end", data=body.encode(), method="POST",
            headers={"Content-Type": "application/json", "X-Admin-PIN": pin},
        )
        with urllib.request.urlopen(request, timeout=10):
            pass
    except urllib.error.HTTPError as exc:
        try:
            detail = json.loads(exc.read()).get("error", exc.reason)
        except ValueError:
            detail = exc.reason
        raise CliError(f"the running arbiter refused: {detail}") from None
    except (OSError, ValueError, KeyError) as exc:
        raise CliError(f"the arbiter is running but its page does not answer: {exc}") from None
    print(f"game {game_id} ended: {args.reason}" + (f", {winner.title} wins" if winner else ""))
    return 0


def _cmd_set_pin(args: argparse.Namespace) -> int:
    from web.auth import AuthError, set_pin

    config = _load_config(args)
    pin = args.pin
    if pin is None:
        hint = "give it as an argument: gg-arbiter set-pin PIN"
        pin = _ask_pin("New admin PIN (4-12 digits): ", hint)
        if _ask_pin("Again: ", hint) != pin:
            raise CliError("the two PINs differ; nothing changed")
    try:
        set_pin(config.data_dir, pin)
    except AuthError as exc:
        raise CliError(str(exc)) from None
    print(f"admin PIN changed (stored hashed in {config.data_dir / 'admin.json'})")
    return 0


def _cmd_broker_config(args: argparse.Namespace) -> int:
    from arbiter.fleet.brokerconf import BrokerConfigError, write_broker_config

    try:
        files = write_broker_config(Path(args.out), event=args.event, tables=args.tables,
                                    port=args.listen_port, force=args.force)
    except BrokerConfigError as exc:
        raise CliError(str(exc)) from None
    print(f"wrote {files.conf}, {files.passwd.name}, {files.acl.name} "
          f"({len(files.users) - 1} tables and the hub)")
    print(f"passwords, one file per user (give each table its own): {files.secrets}/")
    print(f"start the broker: mosquitto -c {files.conf}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="gg-arbiter", description="Salpakan Arbiter: a Game of the Generals arbiter"
    )
    parser.add_argument("--version", action="version", version=f"gg-arbiter {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    judge = sub.add_parser("judge", help="decide one challenge: gg-arbiter judge SPY 5*G")
    judge.add_argument("attacker", metavar="ATTACKER",
                       help="rank (code or name) or piece (W:SPY) of the challenger")
    judge.add_argument("defender", metavar="DEFENDER",
                       help="rank (code or name) or piece (B:5*G) of the challenged")
    judge.add_argument("--json", action="store_true", help="print one JSON object")
    judge.set_defaults(func=_cmd_judge)

    record = sub.add_parser(
        "record", help="print or export a game (ranks only once it is over)"
    )
    record.add_argument("game_id", metavar="GAME_ID", nargs="?", type=int,
                        help="which game (default: the latest)")
    record.add_argument("--data", metavar="DIR", help="data directory")
    record.add_argument("--json", action="store_true", help="print the record as JSON")
    record.set_defaults(func=_cmd_record)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--config", metavar="FILE", help="config file (TOML)")
        p.add_argument("--data", metavar="DIR", help="data directory (games, tags, PIN)")

    run = sub.add_parser("run", help="run the arbiter (the simulator where there is no Pi)")
    common(run)
    run.add_argument("--sim", action="store_true", help="simulator: no hardware needed")
    run.add_argument("--host", help="address the status page listens on")
    run.add_argument("--port", type=_port, help="port of the status page")
    run.add_argument("--script", metavar="FILE",
                     help="play simulator commands from FILE, each once the device has "
                     "settled, then stop (implies --sim)")
    run.add_argument("--broker", metavar="URL",
                     help="tournament broker: mqtt://[user[:password]@]host[:port] (docs/mqtt.md)")
    run.add_argument("--event", metavar="SLUG", help="tournament event (topic gg/SLUG/...)")
    run.add_argument("--table", metavar="NAME", help="this table's name in the tournament")
    run.set_defaults(func=_cmd_run)

    tune = sub.add_parser("tune", help="play a tune, or render it with --wav FILE")
    common(tune)
    tune.add_argument("name", metavar="NAME", nargs="?", help="battle, taps, error, ready, fault")
    tune.add_argument("--wav", metavar="FILE", help="write a WAV file instead of playing")
    tune.add_argument("--list", action="store_true", help="list the tunes")
    tune.set_defaults(func=_cmd_tune)

    selftest = sub.add_parser("selftest", help="light each LED, play each tune, read each slot")
    common(selftest)
    selftest.add_argument("--sim", action="store_true", help="test the simulator")
    selftest.add_argument("--tune", action="append", metavar="NAME",
                          help="play only this tune (repeatable)")
    selftest.add_argument("--settle", type=float, default=1.5, help=argparse.SUPPRESS)
    selftest.set_defaults(func=_cmd_selftest)

    enroll = sub.add_parser("enroll", help="enroll RFID tags: a guided walk through 42 pieces")
    common(enroll)
    enroll.add_argument("--piece", metavar="PIECE",
                        help="re-enroll one piece, e.g. W:PVT#3 or B:5*G")
    enroll.set_defaults(func=_cmd_enroll)

    end = sub.add_parser("end", help="declare an ending the device cannot see")
    common(end)
    end.add_argument("--reason", required=True, choices=sorted(_REASONS))
    end.add_argument("--winner", metavar="SIDE", help="W or B (not for a draw)")
    end.add_argument("--pin", help="admin PIN, when the arbiter is running")
    end.add_argument("--port", type=_port, help="the running arbiter's port (default: config)")
    end.set_defaults(func=_cmd_end)

    broker = sub.add_parser(
        "broker-config", help="write a locked-down Mosquitto config for a venue of N tables")
    broker.add_argument("--tables", type=int, required=True, metavar="N",
                        help="tables 1..N")
    broker.add_argument("--event", required=True, metavar="SLUG", help="the event's name")
    broker.add_argument("--out", required=True, metavar="DIR", help="where to write the files")
    broker.add_argument("--listen-port", type=_port, default=1883, metavar="PORT",
                        help="the broker's port (default 1883)")
    broker.add_argument("--force", action="store_true",
                        help="replace existing files (every password changes)")
    broker.set_defaults(func=_cmd_broker_config)

    set_pin = sub.add_parser("set-pin", help="set the admin PIN of the status page")
    common(set_pin)
    set_pin.add_argument("pin", metavar="PIN", nargs="?", help="4 to 12 digits (asked if left out)")
    set_pin.set_defaults(func=_cmd_set_pin)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    import logging

    level = os.environ.get("GG_ARBITER_LOG", "INFO").upper()
    logging.basicConfig(
        level=level if level in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL") else "INFO",
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
        result: int = args.func(args)
        return result
    except ArbiterError as exc:  # CliError, and any arbiter error a command let through
        print(str(exc), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
