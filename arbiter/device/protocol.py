"""The device's typed seams: what it is given, and what the web may read and ask.

:class:`DeviceView` is everything :mod:`web` uses of the running device; the
web reaches nothing else (no record, no config, no hardware).
:class:`DeviceConfig` and :class:`HeldButton` are what the device takes from
the assembly without knowing the app's config or gpiozero.
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Protocol

from arbiter.drivers.readers.base import SlotState
from arbiter.rules.game import EndingKind, Game
from arbiter.rules.jsondata import JsonDict
from arbiter.rules.pieces import Piece
from arbiter.rules.ranks import Side
from arbiter.rules.verdict import Role


class WebSettings(Protocol):
    """The web part of the app's config."""

    @property
    def admin_pin(self) -> str | None: ...


class DeviceConfig(Protocol):
    """What the device keeps of the app's config (:class:`arbiter.app.config.Config`)."""

    @property
    def data_dir(self) -> Path: ...

    @property
    def web(self) -> WebSettings: ...


class HeldButton(Protocol):
    """A button that calls ``when_held`` after being held (a gpiozero ``Button``)."""

    when_held: Callable[[], None] | None

    def close(self) -> None: ...


class SimulatedSlots(Protocol):
    """The simulator's slots (:class:`arbiter.drivers.readers.sim.SimSlots`)."""

    def seat(self, role: Role, piece_text: str) -> Piece:
        """Put a piece in a slot. :raises PieceError: text that is not a piece."""
        ...

    def clear(self, role: Role) -> None: ...

    def holding(self) -> Mapping[Role, SlotState]:
        """What each slot holds now (``empty`` or ``present``), seated from anywhere."""
        ...


class DeviceView(Protocol):
    """What the web may read of the device and ask of it.

    Status dicts are JSON and never name a rank or a tag. Commands raise
    :class:`arbiter.device.errors.DeviceError` when the device cannot carry them out.
    """

    # -- settings ------------------------------------------------------------

    @property
    def data_dir(self) -> Path:
        """Where the games, the tags and the web's admin.json live."""
        ...

    @property
    def admin_pin(self) -> str | None:
        """The admin PIN set in the config file, if any."""
        ...

    @property
    def is_simulator(self) -> bool: ...

    @property
    def sim(self) -> SimulatedSlots | None:
        """The simulator's slots; None on hardware."""
        ...

    @property
    def can_enroll(self) -> bool:
        """True when the readers read tags (enrollment is possible)."""
        ...

    # -- status --------------------------------------------------------------

    def status(self) -> JsonDict: ...

    def subscribe(self) -> queue.Queue[JsonDict]: ...

    def unsubscribe(self, q: queue.Queue[JsonDict]) -> None: ...

    def outputs(self) -> JsonDict: ...

    def tunes_json(self) -> dict[str, list[list[float | None]]]: ...

    # -- games ---------------------------------------------------------------

    @property
    def current_game_id(self) -> int: ...

    def game_ids(self) -> list[int]:
        """Ids of all recorded games, oldest first."""
        ...

    def game(self, game_id: int) -> Game:
        """A recorded game: its ``public_view`` always, its ``full_record`` once over.

        :raises UnknownGameError: no such game.
        :raises CorruptDataError: its record is damaged (``valid`` holds the intact part).
        :raises StoreError: it cannot be read.
        """
        ...

    # -- commands ------------------------------------------------------------

    def new_game(self, abandon: int | None = None) -> int:
        """Start a new game; ``abandon``: the game still on the caller confirmed it ends.

        :raises WrongGameError: ``abandon`` is not the current game, which is still on.
        """
        ...

    @property
    def sealed_games(self) -> tuple[int, ...]:
        """Abandoned games whose ranks stay secret until the next game has begun."""
        ...

    def reveal_abandoned(self) -> list[int]:
        """The next game has begun by the players' word: reveal the sealed games."""
        ...

    def declare_end(
        self, kind: EndingKind, winner: Side | None, game_id: int | None = None
    ) -> None: ...

    def start_enrollment(self, only: str | None = None) -> JsonDict: ...

    def stop_enrollment(self) -> None: ...

    def skip_enrollment(self) -> JsonDict:
        """Leave the piece asked for without a tag. :raises DeviceError: enrollment is off."""
        ...

    def choose_enrollment(self, piece: str) -> JsonDict:
        """Enroll the piece named next. :raises DeviceError, PieceError: as the device."""
        ...

    def enrollment_status(self) -> JsonDict: ...

    def selftest(self, *, tunes: Sequence[str] | None = None, force: bool = False) -> list[str]: ...

    def reader_faults(self) -> list[str]:
        """One line per slot whose reader reports a fault (never a rank)."""
        ...
