"""The three LEDs over gpiozero: two winner LEDs on one board, the status LED, and their blinks."""

from __future__ import annotations

import itertools
import math

from arbiter.drivers.outputs import LED_OFF, Blink, LedMode, LedState


def blink_frames(blink: Blink) -> tuple[float, list[bool]]:
    """The pattern as a step (seconds) and one cycle of on/off values, one per step."""
    spans = [round(t * 100) for t in (blink.on_time, blink.off_time, blink.pause)]
    # The largest step that fits every span keeps the blink thread's wake-ups rare.
    step = math.gcd(*spans) or 1
    on, off, pause = (span // step for span in spans)
    frames = ([True] * on + [False] * off) * blink.flashes + [False] * pause
    return step / 100, frames


class LedPanel:
    """What each LED shows, and the gpiozero devices that show it.

    Not thread-safe on its own: :class:`~arbiter.drivers.signals.Signals`
    calls it under its lock. The setters return whether anything changed, and
    leave an unchanged LED alone (restarting a blink would jolt its rhythm).
    """

    def __init__(
        self, attacker_led: int, defender_led: int, status_led: int, pin_factory: object
    ) -> None:
        from gpiozero import LED, LEDBoard

        # One board, so a split's two LEDs blink from one thread, in step.
        self._winners = LEDBoard(
            attacker=attacker_led,
            defender=defender_led,
            _order=("attacker", "defender"),
            pin_factory=pin_factory,
        )
        try:
            self._status = LED(status_led, pin_factory=pin_factory)
        except BaseException:
            self._winners.close()
            raise
        self.attacker = LED_OFF
        self.defender = LED_OFF
        self.status = LED_OFF

    def set_winners(self, attacker: LedState, defender: LedState) -> bool:
        """Show ``attacker`` and ``defender`` on the winner LEDs; False if they already do."""
        if (attacker, defender) == (self.attacker, self.defender):
            return False
        self.attacker = attacker
        self.defender = defender
        # Stops the board's blink thread before either LED is set on its own.
        self._winners.off()
        if attacker.mode is LedMode.BLINK and attacker == defender:
            assert attacker.blink is not None
            self._winners.blink(attacker.blink.on_time, attacker.blink.off_time)
            return True
        for led, state in ((self._winners.attacker, attacker), (self._winners.defender, defender)):
            if state.mode is LedMode.BLINK:
                assert state.blink is not None
                led.blink(state.blink.on_time, state.blink.off_time)
            elif state.mode is LedMode.ON:
                led.on()
        return True

    def set_status(self, state: LedState) -> bool:
        """Show ``state`` on the status LED; False if it already does."""
        if state == self.status:
            return False
        self.status = state
        self._status.source = None
        if state.mode is LedMode.BLINK:
            assert state.blink is not None
            step, frames = blink_frames(state.blink)
            self._status.source_delay = step
            self._status.source = itertools.cycle(frames)
        elif state.mode is LedMode.ON:
            self._status.on()
        else:
            self._status.off()
        return True

    def close(self) -> None:
        """Release the pins."""
        self._winners.close()
        self._status.close()
