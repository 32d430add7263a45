"""``gg-arbiter monitor``: a live view of each slot's raw switches or tag frames,
decoded (a simulated bench with ``--sim``)."""

from __future__ import annotations

import argparse
import queue
import sys
import threading
from typing import TYPE_CHECKING, Any

from arbiter.app.commands.common import (
    Serving,
    add_config_options,
    command_config,
    stop_service_hint,
)
from arbiter.app.config import Config
from arbiter.app.errors import CliError
from arbiter.app.service_client import service_running
from arbiter.app.stopping import StopRequests, lines_until
from arbiter.errors import ArbiterError
from arbiter.storage.datalock import DataDirLock
from arbiter.threads import BackgroundThread, declare

if TYPE_CHECKING:  # loaded by the monitor's run only: `gg-arbiter hub` loads no hardware
    from arbiter.app.monitor import Monitor
    from arbiter.storage.registry import TagRegistry

INPUT = declare("monitor input", __name__,
                "reads the monitor's typed commands (q, and the simulated bench's)")


def _cmd_monitor(args: argparse.Namespace, requests: StopRequests) -> int:
    from dataclasses import replace

    config = command_config(args)
    if args.kind:
        config = replace(config, reader=replace(config.reader, kind=args.kind))
    kind = config.reader.kind
    if kind == "sim":
        raise CliError("reader.kind is 'sim': nothing to monitor; use --kind "
                       "keys-gpio|keys-mcp23017|rdm6300|mcu (with --sim to try it here)")
    lock: DataDirLock | None = None
    if not args.sim:
        from arbiter.drivers.pins import hardware_available

        if kind.startswith("keys") and not hardware_available():
            raise CliError("no GPIO hardware here (not a Raspberry Pi): try gg-arbiter "
                           "monitor --sim, which simulates the switches")
        running, lock = service_running(config, args)
        if running:
            raise CliError(stop_service_hint(config, "monitor"))
    try:
        return _monitor(args, config, requests)
    finally:
        if lock is not None:
            lock.release()


def _open(args: argparse.Namespace, config: Config) -> tuple[TagRegistry | None, Any, list[Any]]:
    """The tag registry (tag readers), the simulated bench (``--sim``) and the readers."""
    from arbiter.drivers.pins import pin_errors
    from arbiter.storage.registry import TagRegistry

    kind = config.reader.kind
    registry = None
    try:
        if kind in ("rdm6300", "mcu"):
            registry = TagRegistry.in_directory(config.data_dir)
        if args.sim:
            from arbiter.app.bench_sim import BenchSim

            def tag_of(text: str) -> str | None:
                from arbiter.rules.army import PhysicalPiece

                assert registry is not None
                return registry.tag_of(PhysicalPiece.parse(text if "#" in text else text + "#1"))

            bench: Any = BenchSim(config, tag_of)
            return registry, bench, list(bench.readers)
        from arbiter.app.assembly import build_readers

        with pin_errors():
            return registry, None, list(build_readers(config, None, sim=False)[0])
    except (ArbiterError, OSError) as exc:
        raise CliError(f"cannot start: {exc}") from None


def _monitor(args: argparse.Namespace, config: Config, requests: StopRequests) -> int:
    """The monitor's run, once the hardware is free (or simulated)."""
    from arbiter.app.monitor import Decoder, Monitor, game_on
    from arbiter.drivers.readers.raw import watch_raw

    kind = config.reader.kind
    registry, bench, readers = _open(args, config)
    monitor = Monitor(Decoder(registry), lambda: game_on(config.data_dir))
    game = game_on(config.data_dir)
    print(f"monitor: {kind}{' (simulated)' if bench else ''}; "
          + ("pieces are named (no game on)" if game is None else
             "piece names hidden: a game is on (end it or start a new game to see them)"))
    print("q + Enter (or Ctrl-C) stops" + ("; help lists the bench commands" if bench else ""))
    settle = max(config.reader.invalid_after_ms, config.reader.removal_timeout_ms) / 1000 + 0.3
    typed: queue.Queue[str | None] = queue.Queue()

    def read(stopping: threading.Event) -> None:
        for line in lines_until(sys.stdin, stopping):
            typed.put(line)
        typed.put(None)  # the end of input ends the monitor, as q does

    reading = BackgroundThread(read, INPUT)
    try:
        watch_raw(readers, monitor.on_raw)
        for reader in readers:
            reader.start(monitor.on_reading)
        if bench is not None:
            monitor.wait_quiet(0.15, settle)  # the readers' first report before any command
        reading.start()
        requests.watch(lambda: typed.put("q"))  # Ctrl-C, SIGTERM: as q
        _commands(typed, bench, monitor, settle)
        monitor.wait_quiet(settle, settle * 2)  # let the last change settle before the summary
    finally:
        reading.stop()
        watch_raw(readers, None)
        if bench is not None:
            bench.close()
        else:
            for reader in readers:
                reader.close()
    for line in monitor.summary():
        print(line)
    return 0


def _commands(typed: queue.Queue[str | None], bench: Any, monitor: Monitor,
              settle: float) -> None:
    """Carry out the typed commands until q (or a stop request, or the end of input)."""
    from arbiter.app.errors import BenchCommandError

    while (line := typed.get()) is not None:
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


def register(sub: Any) -> None:
    """Add ``monitor`` to the ``gg-arbiter`` subparsers ``sub``."""
    monitor = sub.add_parser(
        "monitor", help="live view of each slot's raw switches or tag frames, decoded"
    )
    add_config_options(monitor)
    monitor.add_argument("--sim", action="store_true",
                         help="simulated bench: drive switches or tags with typed commands")
    monitor.add_argument("--kind", choices=["keys-gpio", "keys-mcp23017", "rdm6300", "mcu"],
                         help="reader kind (default: reader.kind of the config)")
    monitor.set_defaults(func=Serving(_cmd_monitor))
