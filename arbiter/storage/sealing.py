"""Abandoned games kept sealed until the next game has begun, then revealed.

An abandoned game (NEW GAME before its end) with challenges played stays
*sealed* (:attr:`arbiter.rules.game.Game.sealed`) until the next game has begun:
its first accepted challenge, a declared ending, or
:meth:`arbiter.storage.journal.GameStore.reveal_abandoned`. Then a ``reveal`` line
is appended to the abandoned game's journal, after the line that began the next
game is durable, so a crash between the two leaves the ranks hidden and the next
start appends the line (the next game has begun).

The journal's file format and its appends stay :mod:`arbiter.storage.journal`'s;
this module only decides which games are sealed and when a ``reveal`` line is due.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from arbiter.rules.game import Game
from arbiter.storage.codec import encode, reveal_record
from arbiter.storage.errors import CorruptDataError, StoreError, UnknownGameError
from arbiter.storage.salvage import Salvage

log = logging.getLogger(__name__)


def begun(game: Game) -> bool:
    """A game has begun once a challenge is recorded in it or players declared its end."""
    return game.challenge_count > 0 or (game.over and not game.abandoned)


class SealedGames:
    """The sealed abandoned games of one games directory, oldest first.

    Not thread-safe by itself: the :class:`~arbiter.storage.journal.GameStore`
    that owns it calls it under its own lock.

    :param path: the journal file of a game id.
    :param salvage: sets aside a torn tail before a ``reveal`` line is appended.
    :param append: writes and fsyncs one payload to an open journal (the store's append).
    """

    def __init__(self, path: Callable[[int], Path], salvage: Salvage,
                 append: Callable[[int, bytes], None]) -> None:
        self._path = path
        self._salvage = salvage
        self._append = append
        self._ids: list[int] = []

    @property
    def ids(self) -> tuple[int, ...]:
        return tuple(self._ids)

    def __bool__(self) -> bool:
        return bool(self._ids)

    def add(self, game_id: int) -> None:
        """Seal ``game_id`` (just abandoned) until the next game begins."""
        if game_id not in self._ids:
            self._ids.append(game_id)

    def find(self, current: Game, older: list[int], read: Callable[[int], Game],
             abandoned: Sequence[int], at: float) -> None:
        """At opening, find the sealed games among ``older`` (the ids before ``current``),
        newest first back to the first game neither abandoned nor sealed (they are
        revealed together, so none is sealed before it), and further back to any game
        this opening ended as abandoned (``abandoned``). A sealed game that a later game
        began after (cut short between that game's first line and the reveal, or ended
        by this opening behind games played since) is revealed now. A damaged journal
        ends the search: it is not touched."""
        since = begun(current)
        oldest = min(abandoned, default=current.id)
        late: list[int] = []
        for game_id in reversed(older):
            try:
                game = read(game_id)
            except (CorruptDataError, UnknownGameError, OSError):
                break
            if game.sealed:
                (late if since else self._ids).insert(0, game_id)
            elif game_id <= oldest and (not game.abandoned or game.revealed_at is not None):
                break
            since = since or begun(game)
        if late:
            pending, self._ids = self._ids, late
            self.reveal(at)
            self._ids = self._ids + pending  # any left (a refused write) stay sealed

    def reveal(self, at: float) -> list[int]:
        """Append a ``reveal`` line to each sealed game (the next game has begun); returns
        the ids revealed. A write the disk refuses leaves that game (and the later ones)
        sealed, to be tried again at the next challenge: revealing late is safe."""
        revealed: list[int] = []
        while self._ids:
            game_id = self._ids[0]
            try:
                # A reveal cut short by a power cut left a torn tail: set aside, never
                # appended to (it would join the next line).
                self._salvage.load_for_append(self._path(game_id))
                fd = os.open(self._path(game_id), os.O_WRONLY | os.O_APPEND)
                try:
                    self._append(fd, encode(reveal_record(at)))
                finally:
                    os.close(fd)
            except (OSError, StoreError, CorruptDataError) as exc:
                log.error("could not record that game %d may be revealed: %s", game_id, exc)
                break
            self._ids.pop(0)
            revealed.append(game_id)
            log.info("game %d (abandoned) revealed: the next game has begun", game_id)
        return revealed
