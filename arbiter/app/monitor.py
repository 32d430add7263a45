"""``gg-arbiter monitor``: a live view of each slot's raw input and what it decodes to.

For the bench: it prints every switch pattern as it changes (keys), every tag
frame or microcontroller line (RFID), and each settled reading, with what it
decodes to, so a builder sees which switch is stuck, which key is half
seated, which module sends bad frames. On leaving it sums up which switches
were never seen closed.

Secrecy: a decoded piece is named only while no game is on (no game
recorded, the latest game over, or the latest game has no challenge yet,
the rule the self-test uses). During a game it says only what kind of thing
it read (a piece's code, an enrolled tag); the raw switch bits still show, as
they must for a builder, so run it between games.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from arbiter.drivers.readers.base import SlotReading, SlotState
from arbiter.drivers.readers.raw import RawKind, RawSample
from arbiter.errors import ArbiterError
from arbiter.rules.errors import UnknownKeyError
from arbiter.rules.keycode import DEFAULT_KEYCODE, KeyCode, pressed_switches
from arbiter.rules.verdict import Role
from arbiter.storage.journal import list_game_ids, read_game
from arbiter.storage.registry import TagRegistry

#: Seconds a game-on check is trusted before the journal is read again.
_SECRECY_CACHE = 1.0


def game_on(data_dir: Path) -> int | None:
    """The id of the game in progress (begun, not over), or None between games.

    A record that cannot be read counts as a game on: naming pieces is the risk.
    """
    try:
        ids = list_game_ids(data_dir)
        if not ids:
            return None
        game = read_game(data_dir, ids[-1])
    except (ArbiterError, OSError):
        return -1
    return game.id if game.challenges and not game.over else None


class Decoder:
    """What a token is: a public kind of thing, and (secret) the piece it names."""

    def __init__(self, registry: TagRegistry | None = None,
                 keycode: KeyCode = DEFAULT_KEYCODE) -> None:
        self._registry = registry
        self._keycode = keycode

    def decode(self, token: str) -> tuple[str, str | None]:
        """(what it is, the piece it names or None) for a codeword or a tag id."""
        if self._registry is None:
            try:
                piece = self._keycode.piece(token)
            except UnknownKeyError:
                return "unused code: no piece has this key", None
            return "a piece's code", f"{piece} ({piece.side.title} {piece.rank.full_name})"
        physical = self._registry.lookup_physical(token)
        if physical is None:
            self._registry.reload()  # enrolled meanwhile?
            physical = self._registry.lookup_physical(token)
        if physical is None:
            return "tag not enrolled", None
        return "an enrolled tag", f"{physical} ({physical.side.title} {physical.rank.full_name})"


class Monitor:
    """Turns raw samples and settled readings into lines for a person.

    Callbacks come from the readers' threads; lines are printed under one lock.

    :param secret: the id of the game on (names hidden), or None (names shown).
    """

    def __init__(
        self,
        decoder: Decoder,
        secret: Callable[[], int | None],
        print_fn: Callable[[str], object] = print,
        *,
        keycode: KeyCode = DEFAULT_KEYCODE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._decoder = decoder
        self._secret = secret
        self._print = print_fn
        self._keycode = keycode
        self._clock = clock
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._last_event = clock()
        self._secret_at = float("-inf")
        self._secret_game: int | None = None
        self._last_raw: dict[object, str] = {}
        self.closed_seen: dict[Role, set[int]] = {role: set() for role in Role}
        self.switch_slots: set[Role] = set()
        self.frames: dict[Role, int] = {role: 0 for role in Role}
        self.bad_frames: dict[Role | None, int] = {role: 0 for role in Role}
        self.bad_frames[None] = 0

    # -- callbacks (any thread) ---------------------------------------------

    def on_raw(self, sample: RawSample) -> None:
        with self._lock:
            line = self._raw_line(sample)
            self._touch()
            if line:
                self._print(line)

    def on_reading(self, reading: SlotReading) -> None:
        with self._lock:
            self._touch()
            text = f"{reading.slot.value:9s} settled  {reading.state.value.upper()}"
            if reading.state is SlotState.PRESENT and reading.token:
                text += f" {reading.token} -> {self._name(reading.token)}"
            if reading.detail:
                text += f" ({reading.detail})"
            self._print(text)

    # -- for the command -----------------------------------------------------

    def wait_quiet(self, quiet: float, limit: float) -> None:
        """Wait until nothing has happened for ``quiet`` s (at most ``limit`` s)."""
        deadline = self._clock() + limit
        with self._changed:
            while True:
                now = self._clock()
                if now >= deadline or now - self._last_event >= quiet:
                    return
                self._changed.wait(min(deadline - now, quiet - (now - self._last_event)))

    def summary(self) -> list[str]:
        """What was seen: switches never closed per slot, frame counts."""
        with self._lock:
            lines = []
            for role in sorted(self.switch_slots, key=lambda r: r.value):
                seen = self.closed_seen[role]
                never = [n for n in range(1, self._keycode.switches + 1) if n not in seen]
                lines.append(
                    f"{role.value}: switches seen closed: {_numbers(sorted(seen))}; "
                    f"never closed: {_numbers(never)}"
                )
            for role in Role:
                if self.frames[role] or self.bad_frames[role]:
                    lines.append(f"{role.value}: {self.frames[role]} good frame(s), "
                                 f"{self.bad_frames[role]} refused")
            if self.bad_frames[None]:
                lines.append(f"microcontroller: {self.bad_frames[None]} garbled line(s)")
            return lines

    # -- internals -----------------------------------------------------------

    def _touch(self) -> None:
        self._last_event = self._clock()
        self._changed.notify_all()

    def _hidden(self) -> int | None:
        now = self._clock()
        if now - self._secret_at >= _SECRECY_CACHE:
            self._secret_game = self._secret()
            self._secret_at = now
        return self._secret_game

    def _name(self, token: str) -> str:
        kind, piece = self._decoder.decode(token)
        if piece is None:
            return kind
        game = self._hidden()
        if game is None:
            return piece
        which = f"game {game}" if game > 0 else "a game"
        return f"{kind} (name hidden: {which} is on; names show between games)"

    def _raw_line(self, sample: RawSample) -> str:
        slot = sample.slot.value if sample.slot else "mcu"
        if sample.kind is RawKind.SWITCHES:
            assert sample.slot is not None
            self.switch_slots.add(sample.slot)
            closed = pressed_switches(sample.text)
            self.closed_seen[sample.slot].update(closed)
            if self._last_raw.get(sample.slot) == sample.text:
                return ""
            self._last_raw[sample.slot] = sample.text
            dots = "".join("●" if b == "1" else "○" for b in sample.text)
            return f"{slot:9s} switches {dots} {sample.text}  -> {self._switches(sample.text)}"
        if not sample.ok:
            self.bad_frames[sample.slot] += 1
            self._last_raw.pop(sample.slot, None)
            what = "frame" if sample.kind is RawKind.FRAME else "line"
            return f"{slot:9s} {what:8s} {sample.text}  REFUSED: {sample.note}"
        if sample.kind is RawKind.FRAME:
            assert sample.slot is not None
            self.frames[sample.slot] += 1
            if self._last_raw.get(sample.slot) == sample.text:
                return ""  # an RDM6300 repeats its frame every 50 ms
            self._last_raw[sample.slot] = sample.text
            return f"{slot:9s} frame    {sample.text} ok  -> {self._name(sample.text)}"
        # A microcontroller line: shown when it says something new about its slot.
        key = sample.slot if sample.slot is not None else sample.text
        if self._last_raw.get(key) == sample.text:
            return ""
        self._last_raw[key] = sample.text
        words = sample.text.split("*")[0].split()
        decoded = ""
        if len(words) == 3 and words[1] == "TAG":
            decoded = f"  -> {self._name(words[2])}"
        return f"{slot:9s} line     {sample.text} ok{decoded}"

    def _switches(self, bits: str) -> str:
        closed = pressed_switches(bits)
        weight, n = self._keycode.weight, self._keycode.switches
        if not closed:
            return "empty"
        if self._keycode.is_codeword(bits):
            return self._name(bits)
        listed = _numbers(list(closed))
        if len(closed) < weight:
            return (f"not a piece: {len(closed)} of {n} closed ({listed}): half seated, "
                    "a short tooth, or a switch stuck closed")
        return (f"not a piece: {len(closed)} of {n} closed ({listed}), a key closes {weight}: "
                "a switch stuck closed or a shallow notch")


def _numbers(numbers: list[int]) -> str:
    return ",".join(str(n) for n in numbers) if numbers else "none"
