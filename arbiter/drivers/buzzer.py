"""The buzzer over gpiozero: a passive piezo, an active buzzer, or none at all."""

from __future__ import annotations

from arbiter.drivers.outputs import BuzzerKind

_QUARTER_TONE = 2 ** (1 / 24)


class Buzzer:
    """Sounds a pitch (Hz) or falls silent (None). This base is the missing buzzer."""

    def sound(self, frequency: float | None) -> None:
        """Default: no buzzer wired."""

    def close(self) -> None:
        """Default: nothing to release."""


class PassiveBuzzer(Buzzer):
    """A bare piezo: gpiozero's TonalBuzzer plays each pitch by PWM."""

    def __init__(self, pin: int, pin_factory: object) -> None:
        from gpiozero import TonalBuzzer
        from gpiozero.tones import Tone

        self._tone_class = Tone
        # C5 +- two octaves: C3..C7, about what a small piezo reproduces.
        self._device = TonalBuzzer(pin, mid_tone=Tone("C5"), octaves=2, pin_factory=pin_factory)
        self._low = float(self._device.min_tone.frequency)
        self._high = float(self._device.max_tone.frequency)

    def clamp(self, frequency: float) -> float:
        """Shift by whole octaves into the buzzer's range, so the tune keeps its shape."""
        # Within a quarter tone of an end counts as that end: a slightly flat C3 stays C3.
        while frequency < self._low / _QUARTER_TONE:
            frequency *= 2
        while frequency > self._high * _QUARTER_TONE:
            frequency /= 2
        return min(max(frequency, self._low), self._high)

    def sound(self, frequency: float | None) -> None:
        if frequency is None:
            self._device.stop()
        else:
            self._device.play(self._tone_class.from_frequency(self.clamp(frequency)))

    def close(self) -> None:
        self._device.close()


class ActiveBuzzer(Buzzer):
    """A buzzer with its own oscillator: every note is its one pitch."""

    def __init__(self, pin: int, pin_factory: object) -> None:
        from gpiozero import Buzzer as GpioBuzzer

        self._device = GpioBuzzer(pin, pin_factory=pin_factory)

    def sound(self, frequency: float | None) -> None:
        if frequency is None:
            self._device.off()
        else:
            self._device.on()

    def close(self) -> None:
        self._device.close()


def open_buzzer(kind: BuzzerKind, pin: int | None, pin_factory: object) -> Buzzer:
    """The buzzer of ``kind`` on ``pin``.

    :raises ValueError: a passive or active buzzer without a pin.
    """
    if kind is BuzzerKind.NONE:
        return Buzzer()
    if pin is None:
        raise ValueError(f"a {kind.value} buzzer needs a pin")
    if kind is BuzzerKind.PASSIVE:
        return PassiveBuzzer(pin, pin_factory)
    return ActiveBuzzer(pin, pin_factory)
