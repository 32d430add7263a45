"""Turning raw switch patterns into settled slot readings.

:class:`Debouncer` is a pure state machine for one slot: a reader feeds it
every raw pattern change with a timestamp (:meth:`Debouncer.feed`), sleeps
until :meth:`Debouncer.deadline`, then calls :meth:`Debouncer.poll`. Each call
returns the readings that became settled, only when they differ from the last
one reported. No threads or clocks inside, so tests drive it with fake times.

Rules, with ``n`` switches and an ``m``-of-``n`` :class:`~arbiter.rules.keycode.KeyCode`:

- a pattern counts only once it has been unchanged for ``window`` seconds;
- all switches open is EMPTY; an ``m``-of-``n`` codeword is PRESENT with the
  codeword as token (unused codewords too: naming pieces is not our job);
- any other pattern (half-seated key, stuck or bouncing switch) is never a
  piece: nothing is reported until the slot has gone ``invalid_after``
  seconds without settling since it last matched the reported state, and
  then, if the current pattern is unreadable, INVALID (token None, a detail
  that never names a rank).
"""

from __future__ import annotations

from arbiter.drivers.readers.base import SlotReading, SlotState
from arbiter.drivers.readers.errors import ReaderError
from arbiter.rules.keycode import DEFAULT_KEYCODE, KeyCode
from arbiter.rules.verdict import Role

#: The detail of every INVALID reading.
INVALID_DETAIL = "key not fully seated or bad code"


class Debouncer:
    """Settles one slot's raw switch patterns (tokens of ``'0'``/``'1'``, switch 1 first).

    Times are seconds on any monotonic clock; a time earlier than one already
    seen is taken as that later time.

    :raises ReaderError: if ``window`` is negative or ``invalid_after`` not positive.
    """

    def __init__(
        self,
        slot: Role,
        *,
        keycode: KeyCode = DEFAULT_KEYCODE,
        window: float = 0.03,
        invalid_after: float = 1.0,
    ) -> None:
        if window < 0:
            raise ReaderError(f"debounce window must be >= 0 s, got {window}")
        if invalid_after <= 0:
            raise ReaderError(f"invalid_after must be > 0 s, got {invalid_after}")
        self.slot = slot
        self.keycode = keycode
        self.window = window
        self.invalid_after = invalid_after
        self._raw: str | None = None  # None: nothing known (not started, or after a fault)
        self._raw_since = 0.0
        self._pending_since: float | None = None  # raw stopped matching the report
        self._reported: SlotReading | None = None
        self._now = float("-inf")

    @property
    def reported(self) -> SlotReading | None:
        """The last reading returned, or None before the first."""
        return self._reported

    def feed(self, bits: str, now: float) -> list[SlotReading]:
        """Take the raw pattern seen at ``now``; return readings that settled.

        :raises ValueError: if ``bits`` is not ``switches`` digits 0/1.
        """
        if len(bits) != self.keycode.switches or not set(bits) <= {"0", "1"}:
            raise ValueError(f"expected {self.keycode.switches} digits 0/1, got {bits!r}")
        now = self._advance(now)
        out = self._evaluate(now)  # the old pattern may have settled before this change
        if bits != self._raw:
            self._raw = bits
            self._raw_since = now
            if self._matches_report(bits):
                self._pending_since = None
            elif self._pending_since is None:
                self._pending_since = now
        out += self._evaluate(now)
        return out

    def poll(self, now: float) -> list[SlotReading]:
        """Return the readings that settled by ``now`` (call at :meth:`deadline`)."""
        return self._evaluate(self._advance(now))

    def deadline(self) -> float | None:
        """When :meth:`poll` may next report something; None while nothing is due."""
        raw = self._raw
        if raw is None:
            return None
        if self._readable(raw):
            if self._reading_for(raw) == self._reported:
                return None
            return self._raw_since + self.window
        if self._pending_since is None:
            return None
        return self._pending_since + self.invalid_after

    def fault(self, detail: str) -> list[SlotReading]:
        """Report the reader broken; the next pattern fed starts afresh.

        Once patterns are fed again, the settled state is reported even if it
        equals the one before the fault.
        """
        self._raw = None
        self._pending_since = None
        reading = SlotReading(self.slot, SlotState.FAULT, None, detail)
        if reading == self._reported:
            return []
        self._reported = reading
        return [reading]

    def _advance(self, now: float) -> float:
        self._now = max(self._now, now)
        return self._now

    def _readable(self, bits: str) -> bool:
        return bits == self.keycode.empty or self.keycode.is_codeword(bits)

    def _reading_for(self, bits: str) -> SlotReading:
        if bits == self.keycode.empty:
            return SlotReading(self.slot, SlotState.EMPTY)
        if self.keycode.is_codeword(bits):
            return SlotReading(self.slot, SlotState.PRESENT, bits)
        return SlotReading(self.slot, SlotState.INVALID, None, INVALID_DETAIL)

    def _matches_report(self, bits: str) -> bool:
        return self._reported is not None and self._reading_for(bits) == self._reported

    def _evaluate(self, now: float) -> list[SlotReading]:
        raw = self._raw
        if raw is None:
            return []
        # Compared exactly as deadline() computes them, so poll(deadline()) always acts.
        if self._readable(raw):
            if now < self._raw_since + self.window:
                return []
        elif self._pending_since is None or now < self._pending_since + self.invalid_after:
            return []
        reading = self._reading_for(raw)
        self._pending_since = None
        if reading == self._reported:
            return []
        self._reported = reading
        return [reading]
