"""Assembling a device from a config: pins, readers, outputs, record.

The one place that chooses backends: real pins on a Pi, gpiozero's
MockFactory for the simulator; keys, RFID or the simulator's slots.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from arbiter.app.config import Config
from arbiter.device.arbiter import Arbiter
from arbiter.device.protocol import HeldButton
from arbiter.device.status import OutputWatchers
from arbiter.drivers.identify import KeyIdentifier, PieceIdentifier, TagIdentifier, TextIdentifier
from arbiter.drivers.outputs import OutputsSnapshot
from arbiter.drivers.pins import mock_pin_factory, pin_errors
from arbiter.drivers.readers.base import Clock, SlotReader
from arbiter.drivers.readers.sim import SimSlots
from arbiter.drivers.signals import Signals
from arbiter.fleet.state import BrokerState, FleetState
from arbiter.rules.verdict import Role
from arbiter.storage.journal import GameStore
from arbiter.tunes.defaults import load_tunes

if TYPE_CHECKING:
    from arbiter.storage.registry import TagRegistry

log = logging.getLogger(__name__)


Readers = tuple[list[SlotReader], PieceIdentifier, "TagRegistry | None", SimSlots | None]


def build_readers(
    config: Config, pin_factory: object, sim: bool, clock: Clock = time.monotonic
) -> Readers:
    """The slot readers, the identifier for their tokens, the tag registry (RFID) and sim slots.

    :param clock: the readers' time (debounce, invalid-after, removal timeouts); tests
        pass a fake clock.
    """
    kind = config.reader.kind
    if kind == "sim" or sim:
        return _simulated_readers(config)
    if kind.startswith("keys"):
        return _key_readers(config, pin_factory, clock), KeyIdentifier(), None, None
    from arbiter.storage.registry import TagRegistry

    registry = TagRegistry.in_directory(config.data_dir)
    return _tag_readers(config, clock), TagIdentifier(registry), registry, None


def _simulated_readers(config: Config) -> Readers:
    """The simulator's slots: keys (plain piece names), or an RFID kind's pieces carrying
    simulated stickers, enrolled as on the board (in a file of their own)."""
    kind = config.reader.kind
    if kind == "sim" or kind.startswith("keys"):
        slots = SimSlots()
        return [slots], TextIdentifier(), None, slots
    from arbiter.drivers.readers.sim import SIM_TAGS
    from arbiter.storage.registry import TagRegistry

    registry = TagRegistry(config.data_dir / SIM_TAGS)  # never the real stickers' file
    slots = SimSlots(registry, tag_lengths(kind), kind)
    return [slots], TagIdentifier(registry), registry, slots


def _key_readers(config: Config, pin_factory: object, clock: Clock) -> list[SlotReader]:
    """The notched keys' switch readers: straight on the Pi's GPIO, or through an MCP23017."""
    r = config.reader
    window = r.debounce_ms / 1000
    invalid_after = r.invalid_after_ms / 1000
    if r.kind == "keys-gpio":
        from arbiter.drivers.readers.gpio_keys import gpio_key_readers

        return list(gpio_key_readers(r.attacker_pins, r.defender_pins, window=window,
                                     invalid_after=invalid_after, pin_factory=pin_factory,
                                     clock=clock))
    from arbiter.drivers.readers.mcp23017 import Mcp23017KeyReader, open_bus

    return [Mcp23017KeyReader(open_bus(r.i2c_bus), address=r.i2c_address,
                              interrupt_pin=r.interrupt_pin, window=window,
                              invalid_after=invalid_after, pin_factory=pin_factory, clock=clock)]


def _tag_readers(config: Config, clock: Clock) -> list[SlotReader]:
    """The RFID readers: one RDM6300 per slot, or the microcontroller reading both."""
    r = config.reader
    if r.kind == "rdm6300":
        from arbiter.drivers.readers.rdm6300 import Rdm6300Reader

        timeout = r.removal_timeout_ms / 1000
        return [
            Rdm6300Reader(Role.ATTACKER, r.attacker_port, removal_timeout=timeout, clock=clock),
            Rdm6300Reader(Role.DEFENDER, r.defender_port, removal_timeout=timeout, clock=clock),
        ]
    from arbiter.drivers.readers.mcu import McuReader

    return [McuReader(r.mcu_port, clock=clock, rx_gain_db=r.rx_gain_db)]


def tag_lengths(kind: str) -> frozenset[int]:
    """How many hex digits a tag id of reader ``kind`` has: an RDM6300's 10, or the
    microcontroller's (an RC522's 8, 14 or 20, or an RDM6300's 10 through the Pico)."""
    if kind == "rdm6300":
        from arbiter.drivers.readers.rdm6300 import TAG_DIGITS

        return frozenset((TAG_DIGITS,))
    from arbiter.drivers.readers.mcu import TAG_LENGTHS

    return TAG_LENGTHS


def build_signals(
    config: Config, pin_factory: object, on_change: Callable[[OutputsSnapshot], None] | None = None
) -> Signals:
    """LEDs and buzzer on the configured pins, playing the configured tunes."""
    s = config.signals
    return Signals(
        attacker_led=s.attacker_led,
        defender_led=s.defender_led,
        status_led=s.status_led,
        buzzer=s.buzzer_pin if s.buzzer_kind != "none" else None,
        tunes=load_tunes(config.tunes),
        buzzer_kind=s.buzzer_kind,
        pin_factory=pin_factory,
        battle_phrase=s.battle_phrase,
        on_change=on_change,
    )


def _new_game_button(config: Config, pin_factory: object) -> HeldButton:
    """NEW GAME: a button from its GPIO to GND, held for ``hold_seconds``.

    The device connects its ``when_held``.
    """
    from gpiozero import Button

    button: HeldButton = Button(
        config.button.new_game_pin,
        pull_up=True,
        hold_time=config.button.hold_seconds,
        pin_factory=pin_factory,
    )
    return button


def fleet_state(config: Config) -> FleetState | None:
    """What the page shows of the tournament link; None when no broker is configured."""
    if not config.tournament.configured:
        return None
    return FleetState(BrokerState.RECONNECTING)


def build_arbiter(
    config: Config,
    *,
    data_dir: str | Path | None = None,
    sim: bool = False,
    pin_factory: object = None,
    repair: bool = True,
    clock: Clock = time.monotonic,
) -> Arbiter:
    """A ready-to-start :class:`Arbiter` for ``config``.

    :param sim: simulator: virtual slots and mock pins for LEDs, buzzer and button.
    :param pin_factory: override gpiozero's pin factory (tests pass a MockFactory).
    :param clock: the slot readers' time (tests pass a fake clock).
    :raises ArbiterError: when a part cannot be set up (a :class:`PinSetupError`
        for the pins, a ``StoreError`` for the record, a ``ReaderError``...).
    """
    factory = pin_factory if pin_factory is not None else (mock_pin_factory() if sim else None)
    data = Path(data_dir) if data_dir else config.data_dir
    if data != config.data_dir:
        from dataclasses import replace

        config = replace(config, data_dir=data)
    store = GameStore(data, repair=repair)
    with pin_errors():
        opened: list[Callable[[], None]] = [store.close]
        try:
            outputs = OutputWatchers()  # the simulator console follows the LEDs through it
            signals = build_signals(config, factory, on_change=outputs.notify)
            opened.append(signals.close)
            readers, identifier, registry, slots = build_readers(config, factory, sim, clock)
            opened.extend(reader.close for reader in readers)
            button = _new_game_button(config, factory)
            opened.append(button.close)
            return Arbiter(
                store,
                readers,
                identifier,
                signals,
                tunes=load_tunes(config.tunes),
                config=config,
                sim=slots,
                registry=registry,
                outputs=outputs,
                new_game_button=button,
                clock=clock,
                fleet=fleet_state(config),
            )
        except BaseException:
            for close in reversed(opened):
                with contextlib.suppress(Exception):
                    close()
            raise
