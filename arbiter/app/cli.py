"""The ``gg-arbiter`` command line."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from arbiter import __version__
from arbiter.app.config import Config, ConfigError, load_config
from arbiter.app.errors import CliError, DataInUseError
from arbiter.app.hub_cli import add_hub_parser
from arbiter.app.service_client import (
    ask_pin,
    end_through_service,
    enroll_through_service,
    selftest_through_service,
    service_running,
)
from arbiter.errors import ArbiterError
from arbiter.pinrule import RULE as PIN_RULE
from arbiter.pinrule import PinFormatError, legacy_pin_note
from arbiter.rules.game import EndingError, EndingKind, Game
from arbiter.rules.pieces import Piece, PieceError, parse_rank, parse_side
from arbiter.rules.ranks import Rank, Side
from arbiter.rules.verdict import resolve
from arbiter.storage.datalock import DataDirLock
from arbiter.storage.journal import (
    CorruptDataError,
    GameStore,
    StoreError,
    StoreLockedError,
    list_game_ids,
    read_game,
)
from arbiter.storage.paths import DATA_ENV, default_config_path, default_data_dir
from arbiter.tunes.defaults import load_tunes

if TYPE_CHECKING:
    # The device is loaded only by the commands that build one: `gg-arbiter hub`
    # never loads a device or hardware module.
    from arbiter.device.arbiter import Arbiter


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


def _build(config: Config, sim: bool) -> Arbiter:
    """The device for run/selftest, with every set-up failure as one clear line."""
    from arbiter.app.assembly import build_arbiter
    from arbiter.hardware.pins import PinSetupError

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
    return _load_config(args).data_dir


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


#: Where the installed service keeps its data (the systemd unit's GG_ARBITER_DATA).
SERVICE_DATA_DIR = Path("/var/lib/gg-arbiter")


def _load_config(args: argparse.Namespace, *, follow_service: bool = True) -> Config:
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
    config = _load_config(args, follow_service=False)
    if args.script:
        args.sim = True  # a script plays the simulator's slots
    sim = _choose_sim(args, config)
    from arbiter.app.service import serve, stdin_or_none

    flags = (args.broker, args.event, args.table, args.ca_file, args.password_file)
    if any(flag is not None for flag in flags):
        from dataclasses import replace

        from arbiter.fleet.settings import SettingsError

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
    if args.range:
        return _range_check(config, args)
    if args.gain is not None:
        raise CliError("--gain is for the range check: gg-arbiter selftest --range --gain DB")
    sim = _choose_sim(args, config)
    from arbiter.device.arbiter import DeviceError

    unknown = [name for name in args.tune or () if name not in config.tunes]
    if unknown:
        raise CliError(f"no tune {unknown[0]!r}; tunes: {', '.join(config.tunes)}")
    running, lock = service_running(config, args)
    if running:
        # The running arbiter owns the LEDs, buzzer and slots: it runs the test.
        return selftest_through_service(config, args)
    if lock is not None:
        lock.release()  # the arbiter built below takes it
    try:
        arbiter = _build(config, sim)
    except DataInUseError:
        raise CliError(_stop_service_hint(config, "the self-test")) from None
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


def _range_check(config: Config, args: argparse.Namespace) -> int:
    from arbiter.app.range_console import run_range_check

    lock: DataDirLock | None = None
    if not args.sim:  # the check opens the Pico itself: the arbiter must not hold it
        running, lock = service_running(config, args)
        if running:
            raise CliError(_stop_service_hint(config, "the range check"))
    try:
        return run_range_check(config, sim=args.sim, gain_db=args.gain)
    finally:
        if lock is not None:
            lock.release()


def _cmd_enroll(args: argparse.Namespace) -> int:
    config = _load_config(args)
    if config.reader.kind not in ("rdm6300", "mcu"):
        raise CliError(
            f"enrollment is for RFID readers; reader.kind is {config.reader.kind!r}"
            " (set it to rdm6300 or mcu)"
        )

    running, lock = service_running(config, args)
    if running and not args.sim:
        return enroll_through_service(config, args)
    try:
        return _enroll_here(config, args)
    finally:
        if lock is not None:
            lock.release()


def _enroll_here(config: Config, args: argparse.Namespace) -> int:
    """No arbiter runs: open the reader here (holding the data directory meanwhile)."""
    from arbiter.app.enroll_console import run_enrollment_walk

    return run_enrollment_walk(config, args.piece, sim=args.sim)


def _stop_service_hint(config: Config, what: str) -> str:
    return (
        f"the arbiter is running (it holds {config.data_dir} and the slots): {what} needs "
        "the hardware to itself. Stop it with 'sudo systemctl stop gg-arbiter' (or Ctrl-C "
        "where 'gg-arbiter run' runs), run the command, then 'sudo systemctl start gg-arbiter'"
    )


def _cmd_monitor(args: argparse.Namespace) -> int:
    from dataclasses import replace

    config = _load_config(args)
    if args.kind:
        config = replace(config, reader=replace(config.reader, kind=args.kind))
    kind = config.reader.kind
    if kind == "sim":
        raise CliError("reader.kind is 'sim': nothing to monitor; use --kind "
                       "keys-gpio|keys-mcp23017|rdm6300|mcu (with --sim to try it here)")
    lock: DataDirLock | None = None
    if not args.sim:
        from arbiter.hardware.pins import hardware_available

        if kind.startswith("keys") and not hardware_available():
            raise CliError("no GPIO hardware here (not a Raspberry Pi): try gg-arbiter "
                           "monitor --sim, which simulates the switches")
        running, lock = service_running(config, args)
        if running:
            raise CliError(_stop_service_hint(config, "monitor"))
    try:
        return _monitor(args, config)
    finally:
        if lock is not None:
            lock.release()


def _monitor(args: argparse.Namespace, config: Config) -> int:
    """The monitor's run, once the hardware is free (or simulated)."""
    from arbiter.app.monitor import Decoder, Monitor, game_on
    from arbiter.hardware.pins import pin_errors
    from arbiter.hardware.readers.raw import watch_raw
    from arbiter.storage.registry import TagRegistry

    kind = config.reader.kind
    registry = None
    try:
        if kind in ("rdm6300", "mcu"):
            registry = TagRegistry.in_directory(config.data_dir)
        if args.sim:
            from arbiter.app.bench_sim import BenchCommandError, BenchSim

            def tag_of(text: str) -> str | None:
                from arbiter.rules.army import PhysicalPiece

                assert registry is not None
                return registry.tag_of(PhysicalPiece.parse(text if "#" in text else text + "#1"))

            bench: Any = BenchSim(config, tag_of)
            readers = bench.readers
        else:
            from arbiter.app.assembly import build_readers

            bench = None
            with pin_errors():
                readers = build_readers(config, None, sim=False)[0]
    except (ArbiterError, OSError) as exc:
        raise CliError(f"cannot start: {exc}") from None
    monitor = Monitor(Decoder(registry), lambda: game_on(config.data_dir))
    game = game_on(config.data_dir)
    print(f"monitor: {kind}{' (simulated)' if bench else ''}; "
          + ("pieces are named (no game on)" if game is None else
             "piece names hidden: a game is on (end it or start a new game to see them)"))
    print("q + Enter (or Ctrl-C) stops" + ("; help lists the bench commands" if bench else ""))
    settle = max(config.reader.invalid_after_ms, config.reader.removal_timeout_ms) / 1000 + 0.3
    try:
        watch_raw(readers, monitor.on_raw)
        for reader in readers:
            reader.start(monitor.on_reading)
        if bench is not None:
            monitor.wait_quiet(0.15, settle)  # the readers' first report before any command
        for line in sys.stdin:
            word = line.strip()
            if word.lower() in ("q", "quit", "exit"):
                break
            if bench is None:
                if word:
                    print("the only command is q (quit)")
                continue
            try:
                answer = bench.command(word)
            except BenchCommandError as exc:
                print(f"error: {exc}")
                continue
            if answer and answer != "ok":
                print(answer)
            monitor.wait_quiet(0.15, settle)
        monitor.wait_quiet(settle, settle * 2)  # let the last change settle before the summary
    except KeyboardInterrupt:
        pass
    finally:
        watch_raw(readers, None)
        if bench is not None:
            bench.close()
        else:
            for reader in readers:
                reader.close()
    for line in monitor.summary():
        print(line)
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
        return end_through_service(config, args, winner)
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


def _cmd_set_pin(args: argparse.Namespace) -> int:
    from web.kit.auth import AuthError, set_pin

    config = _load_config(args)
    pin = args.pin
    if pin is None:
        hint = "give it as an argument: gg-arbiter set-pin PIN"
        pin = ask_pin(f"New admin PIN ({PIN_RULE}): ", hint)
        if ask_pin("Again: ", hint) != pin:
            raise CliError("the two PINs differ; nothing changed")
    try:
        set_pin(config.data_dir, pin)
    except PinFormatError as exc:
        raise CliError(f"{exc}; nothing changed{legacy_pin_note(pin)}") from None
    except AuthError as exc:
        raise CliError(str(exc)) from None
    print(f"admin PIN changed (stored hashed in {config.data_dir / 'admin.json'})")
    return 0


def _cmd_join(args: argparse.Namespace) -> int:
    from arbiter.fleet.join import JoinError, configured_data_dir, join, read_venue_file

    path = Path(args.config) if args.config else default_config_path()
    if path is None:
        raise CliError("join: give --config FILE, the table's config (made if missing)")
    try:
        venue = read_venue_file(Path(args.venue_file))
        data = Path(args.data) if args.data else configured_data_dir(path) or default_data_dir()
        secret, ca = join(venue, path, data)
        load_config(path)  # the section written is one the arbiter takes
    except (JoinError, ConfigError) as exc:
        raise CliError(str(exc)) from None
    print(f"table {venue.table} of {venue.event} on {venue.broker}: [tournament] written to "
          f"{path}, the password to {secret}" + (f", the CA to {ca}" if ca else ""))
    print("restart the arbiter to connect (the service: sudo systemctl restart gg-arbiter)")
    return 0


def _cmd_broker_config(args: argparse.Namespace) -> int:
    from arbiter.fleet.brokerconf import (
        BROKER_USER,
        BrokerConfigError,
        TlsListener,
        unreadable_by_broker,
        write_broker_config,
    )

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

    def service_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--pin", help="admin PIN, when the arbiter is running "
                       "(else $GG_ARBITER_PIN, else asked)")
        p.add_argument("--port", type=_port,
                       help="the running arbiter's port (default: web.port of the config)")

    run = sub.add_parser("run", help="run the arbiter (the simulator where there is no Pi)")
    common(run)
    run.add_argument("--sim", action="store_true", help="simulator: no hardware needed")
    run.add_argument("--host", help="address the status page listens on")
    run.add_argument("--port", type=_port, help="port of the status page")
    run.add_argument("--script", metavar="FILE",
                     help="play simulator commands from FILE, each once the device has "
                     "settled, then stop (implies --sim)")
    run.add_argument("--broker", metavar="URL",
                     help="tournament broker: mqtt://[user[:password]@]host[:port], or mqtts://... "
                          "with [tournament] ca_file (docs/mqtt.md)")
    run.add_argument("--event", metavar="SLUG", help="tournament event (topic gg/SLUG/...)")
    run.add_argument("--table", metavar="NAME", help="this table's name in the tournament")
    run.add_argument("--password-file", metavar="FILE",
                     help="the broker password, first line of FILE (as [tournament] "
                          "password_file; this wins): kept out of the URL, which ps shows")
    run.add_argument("--ca-file", metavar="PATH",
                     help="mqtts:// only: the CA that signed the broker's certificate "
                          "(as [tournament] ca_file; this wins)")
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
    selftest.add_argument("--range", action="store_true",
                          help="RC522 read range: where a sticker reads in each slot, "
                               "cross-reads, the gain to use (reader.kind mcu)")
    selftest.add_argument("--gain", type=int, metavar="DB",
                          help="with --range: try this receiver gain (18, 23, 33, 38, 43, 48)")
    service_options(selftest)
    selftest.set_defaults(func=_cmd_selftest)

    enroll = sub.add_parser("enroll", help="enroll RFID tags: a guided walk through 42 pieces")
    common(enroll)
    enroll.add_argument("--piece", metavar="PIECE",
                        help="re-enroll one piece, e.g. W:PVT#3 or B:5*G")
    enroll.add_argument("--sim", action="store_true",
                        help="rehearse: simulated stickers, Enter seats the piece asked for")
    service_options(enroll)
    enroll.set_defaults(func=_cmd_enroll)

    monitor = sub.add_parser(
        "monitor", help="live view of each slot's raw switches or tag frames, decoded"
    )
    common(monitor)
    monitor.add_argument("--sim", action="store_true",
                         help="simulated bench: drive switches or tags with typed commands")
    monitor.add_argument("--kind", choices=["keys-gpio", "keys-mcp23017", "rdm6300", "mcu"],
                         help="reader kind (default: reader.kind of the config)")
    monitor.set_defaults(func=_cmd_monitor)

    end = sub.add_parser("end", help="declare an ending the device cannot see")
    common(end)
    end.add_argument("--reason", required=True, choices=sorted(_REASONS))
    end.add_argument("--winner", metavar="SIDE", help="W or B (not for a draw)")
    service_options(end)
    end.set_defaults(func=_cmd_end)

    broker = sub.add_parser(
        "broker-config", help="write a locked-down Mosquitto config for a venue of N tables")
    broker.add_argument("--tables", type=int, required=True, metavar="N",
                        help="tables 1..N")
    broker.add_argument("--event", required=True, metavar="SLUG", help="the event's name")
    broker.add_argument("--out", required=True, metavar="DIR", help="where to write the files")
    broker.add_argument("--listen-port", type=_port, default=1883, metavar="PORT",
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
    broker.add_argument("--tls-port", type=_port, default=8883, metavar="PORT",
                        help="the TLS listener's port (default 8883)")
    broker.set_defaults(func=_cmd_broker_config)

    join_p = sub.add_parser(
        "join", help="take this table's place in a venue: the file broker-config wrote for it")
    common(join_p)
    join_p.add_argument("venue_file", metavar="TABLE.toml",
                        help="table-N.toml, with table-N.password beside it")
    join_p.set_defaults(func=_cmd_join)

    set_pin = sub.add_parser("set-pin", help="set the admin PIN of the status page")
    common(set_pin)
    set_pin.add_argument("pin", metavar="PIN", nargs="?", help=f"{PIN_RULE} (asked if left out)")
    set_pin.set_defaults(func=_cmd_set_pin)

    add_hub_parser(sub, _Parser)
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
