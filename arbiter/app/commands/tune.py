"""``gg-arbiter tune [NAME]``: play a tune, list them, or render one as a WAV file."""

from __future__ import annotations

import argparse
from typing import Any

from arbiter.app.commands.common import (
    add_config_options,
    command_config,
)
from arbiter.app.errors import CliError
from arbiter.tunes.defaults import load_tunes


def _cmd_tune(args: argparse.Namespace) -> int:
    config = command_config(args)
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
    from arbiter.drivers.pins import hardware_available

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


def register(sub: Any) -> None:
    """Add ``tune`` to the ``gg-arbiter`` subparsers ``sub``."""
    tune = sub.add_parser("tune", help="play a tune, or render it with --wav FILE")
    add_config_options(tune)
    tune.add_argument("name", metavar="NAME", nargs="?", help="battle, taps, error, ready, fault")
    tune.add_argument("--wav", metavar="FILE", help="write a WAV file instead of playing")
    tune.add_argument("--list", action="store_true", help="list the tunes")
    tune.set_defaults(func=_cmd_tune)
