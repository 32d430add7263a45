"""A keys-gpio arbiter on gpiozero mock pins, and the fast config it runs on."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from arbiter.app.config import Config
from arbiter.device.arbiter import Arbiter, DeviceState
from arbiter.drivers.readers.base import SlotReading, SlotState
from arbiter.rules.keycode import DEFAULT_KEYCODE
from arbiter.rules.pieces import Piece
from arbiter.rules.verdict import Role
from tests.support.waiting import WAIT, wait_until

# Taps at ten times the tempo: the same pitches, 2.3 s instead of 23.
FAST_TAPS = (
    "Taps:d=4,o=5,b=630:8g4.,16g4,2c,8g4.,16c,2e,8g4,8c,e,8g4,8c,e,"
    "8g4,8c,2e,8c.,16e,2g,8e.,16c,2g4,8g4.,16g4,1c"
)


def write_config(tmp_path: Path, extra: str = "", battle: bool = False) -> Path:
    """A keys-gpio config with short debounce and fast tunes, ``extra`` TOML appended."""
    path = tmp_path / "config.toml"
    path.write_text(
        f"""
[reader]
kind = "keys-gpio"
debounce_ms = 20
invalid_after_ms = 300
[signals]
battle_phrase = {"true" if battle else "false"}
[tunes]
taps = "{FAST_TAPS}"
battle = "Charge:d=8,o=5,b=600:g4,c,e,4g.,e,2g"
error = "Error:d=16,o=4,b=600:c,p,c"
ready = "Ready:d=16,o=5,b=600:c,e,g"
{extra}
"""
    )
    return path


class Rig:
    """A keys-gpio arbiter on a MockFactory, with hands to push keys in and eyes on
    every reading its readers hand the device.

    Give it the arbiter before starting it (:meth:`start`): the readers take the
    reading callback, spied on here, when they start.
    """

    def __init__(self, arbiter: Arbiter, factory: Any) -> None:
        self.arbiter = arbiter
        self.factory = factory
        self.readings: list[SlotReading] = []
        self._cond = threading.Condition()
        worker = arbiter._worker
        hand_over = worker.post

        def spy(reading: SlotReading) -> None:
            with self._cond:
                self.readings.append(reading)
                self._cond.notify_all()
            hand_over(reading)

        # The readers are handed worker.post when the arbiter starts.
        worker.post = spy  # type: ignore[method-assign]
        config = arbiter.config
        assert isinstance(config, Config), "a rig needs a device built from an app Config"
        self.config = config
        self.pins = {
            Role.ATTACKER: config.reader.attacker_pins,
            Role.DEFENDER: config.reader.defender_pins,
        }
        self.leds = {
            "attacker": config.signals.attacker_led,
            "defender": config.signals.defender_led,
        }

    def start(self) -> Rig:
        """Start the arbiter (readers, worker); returns this rig."""
        self.arbiter.start()
        return self

    def wait_reading(self, role: Role, state: SlotState, token: str | None = None) -> None:
        """Wait until the device has been handed this reading (token None: any)."""

        def seen() -> bool:
            return any(
                r.slot is role and r.state is state and (token is None or r.token == token)
                for r in self.readings
            )

        with self._cond:
            ok = self._cond.wait_for(seen, WAIT)
        assert ok, f"no {role.value} {state.value} {token or ''} reading: {self.readings}"

    def settle(self) -> None:
        """Wait until the device's worker has handled every reading handed to it so far:
        a command queued behind them has run (the proof that nothing else came of them)."""
        self.arbiter._call(lambda: None)

    def prompts(self) -> int:
        """How many times the NEW GAME confirmation prompt has played."""
        return sum(t["name"] == "confirm" for t in self.arbiter.outputs()["played"])

    def hold_new_game(self) -> None:
        """Hold NEW GAME until the device has answered (a prompt played or a game started),
        then let go."""
        pin = self.factory.pin(self.config.button.new_game_pin)
        before = (self.prompts(), self.arbiter.status()["game_id"])
        pin.drive_low()
        wait_until(lambda: (self.prompts(), self.arbiter.status()["game_id"]) != before,
                   what="the device's answer to the held button")
        pin.drive_high()
        self.settle()

    def seat(self, role: Role, piece: str | Piece) -> None:
        word = DEFAULT_KEYCODE.codeword(Piece.parse(piece) if isinstance(piece, str) else piece)
        self.press(role, word)

    def press(self, role: Role, word: str) -> None:
        for pin, bit in zip(self.pins[role], word, strict=True):
            if bit == "1":
                self.factory.pin(pin).drive_low()
            else:
                self.factory.pin(pin).drive_high()

    def empty(self, role: Role | None = None) -> None:
        """Take pieces out and wait until the device has seen the slots empty."""
        roles = [role] if role else list(Role)
        for r in roles:
            self.press(r, "0" * 7)
        wait_until(
            lambda: all(self.arbiter.status()["slots"][r.value] == "empty" for r in roles),
            what=f"{[r.value for r in roles]} slots empty",
        )

    def lit(self, name: str) -> bool:
        return bool(self.factory.pin(self.leds[name]).state)

    def count(self) -> int:
        return int(self.arbiter.status()["challenge_count"])

    def challenge(self, attacker: str, defender: str) -> dict[str, Any]:
        """Seat both pieces and wait for the verdict; the status right after it."""
        before = self.count()
        self.seat(Role.ATTACKER, attacker)
        self.seat(Role.DEFENDER, defender)
        wait_until(lambda: self.count() == before + 1, what=f"challenge {before + 1} counted")
        wait_until(
            lambda: self.arbiter.state in (DeviceState.RESULT, DeviceState.GAME_OVER),
            what="the verdict shown",
        )
        return self.arbiter.status()
