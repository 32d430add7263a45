"""``gg-arbiter selftest``: light each LED, play each tune, read each slot (through
the running arbiter when it runs)."""

from __future__ import annotations

import argparse
import time
from typing import Any

from arbiter.app.commands.common import (
    Serving,
    add_config_options,
    add_service_options,
    build_device,
    choose_sim,
    command_config,
    stop_service_hint,
)
from arbiter.app.config import Config
from arbiter.app.errors import CliError, DataInUseError
from arbiter.app.service_client import selftest_through_service, service_running
from arbiter.app.stopping import StopRequests, interruptible
from arbiter.storage.datalock import DataDirLock


def _cmd_selftest(args: argparse.Namespace, requests: StopRequests) -> int:
    config = command_config(args)
    if args.range:  # it waits for the builder at each height: a stop ends it cleanly
        return _range_check(config, args, requests)
    with interruptible():  # a few seconds of lights and tunes: Ctrl-C as before
        return _selftest(config, args)


def _selftest(config: Config, args: argparse.Namespace) -> int:
    """Light each LED, play each tune, read each slot (the running arbiter does it when
    it runs); the exit status."""
    if args.gain is not None:
        raise CliError("--gain is for the range check: gg-arbiter selftest --range --gain DB")
    sim = choose_sim(args, config)
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
        arbiter = build_device(config, sim)
    except DataInUseError:
        raise CliError(stop_service_hint(config, "the self-test")) from None
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


def _range_check(config: Config, args: argparse.Namespace, requests: StopRequests) -> int:
    from arbiter.app.range_console import run_range_check

    lock: DataDirLock | None = None
    if not args.sim:  # the check opens the Pico itself: the arbiter must not hold it
        running, lock = service_running(config, args)
        if running:
            raise CliError(stop_service_hint(config, "the range check"))
    try:
        return run_range_check(config, sim=args.sim, gain_db=args.gain, requests=requests)
    finally:
        if lock is not None:
            lock.release()


def register(sub: Any) -> None:
    """Add ``selftest`` to the ``gg-arbiter`` subparsers ``sub``."""
    selftest = sub.add_parser("selftest", help="light each LED, play each tune, read each slot")
    add_config_options(selftest)
    selftest.add_argument("--sim", action="store_true", help="test the simulator")
    selftest.add_argument("--tune", action="append", metavar="NAME",
                          help="play only this tune (repeatable)")
    selftest.add_argument("--settle", type=float, default=1.5, help=argparse.SUPPRESS)
    selftest.add_argument("--range", action="store_true",
                          help="RC522 read range: where a sticker reads in each slot, "
                               "cross-reads, the gain to use (reader.kind mcu)")
    selftest.add_argument("--gain", type=int, metavar="DB",
                          help="with --range: try this receiver gain (18, 23, 33, 38, 43, 48)")
    add_service_options(selftest)
    selftest.set_defaults(func=Serving(_cmd_selftest))
