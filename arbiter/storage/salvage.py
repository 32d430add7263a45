"""What opening a games directory mends, so the store starts on whole journals.

A write cut short leaves a temp or ``.pending`` file (removed: the files it would
have replaced are whole); a torn tail, a write never acknowledged, is set aside; a
damaged journal is salvaged (with ``repair``: its intact lines kept, a copy of the
original beside it); an older game left open by a NEW GAME cut short is recorded as
abandoned. Every step says what it did in :attr:`Salvage.problems` and the log.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

from arbiter.rules.game import Ending, EndingKind
from arbiter.storage.codec import (
    FORMAT_VERSION,
    LoadedGame,
    decode,
    encode,
    ending_record,
    load_game,
    records_of,
)
from arbiter.storage.durable import fsync_path, write_durably
from arbiter.storage.errors import CorruptDataError

log = logging.getLogger(__name__)

#: A new game's journal before NEW GAME has ended the old game (never listed as a game).
PENDING = ".pending"


class Salvage:
    """The mending of one games directory when a
    :class:`~arbiter.storage.journal.GameStore` opens it.

    ``append(fd, payload)`` is the store's durable append (an abandoned game's ending
    goes through it); ``repair`` as the store's; ``problems`` lists what was mended.
    """

    def __init__(self, games_dir: Path, *, repair: bool,
                 append: Callable[[int, bytes], None]) -> None:
        self.games_dir = games_dir
        self.repair = repair
        self.problems: list[str] = []
        #: Ids of the games this opening ended as abandoned (a later game follows each).
        self.abandoned: list[int] = []
        self._append = append

    def remove_temp_files(self) -> None:
        """Remove the temp and pending files of writes cut short."""
        # A temp file is a write never acknowledged (a NEW GAME or a repair cut
        # short before its rename): the files it was meant to replace are whole.
        leftovers = [*self.games_dir.glob("*.tmp"), *self.games_dir.glob(f"*{PENDING}")]
        for tmp in leftovers:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
            log.warning("removed %s, left by a write cut short", tmp)

    def finish_new_games(self, older: list[Path], next_started: float) -> None:
        """End as abandoned every older game (``older``: their journals, oldest first)
        still open. NEW GAME ends the old game before the new journal appears, but
        versions before it did the reverse, so a crash between the two could leave the
        old one open (and so can an ending refused by the disk below). It is ended when
        its successor began."""
        for path in reversed(older):
            over, started = peek(path)
            if not over:
                self._abandon(path, next_started)
            next_started = started if started is not None else next_started

    def _abandon(self, path: Path, at: float) -> None:
        try:
            loaded = load_game(path)
        except (CorruptDataError, OSError) as exc:
            log.warning("cannot end the older game in %s: %s", path, exc)
            return
        if loaded.game.over:
            return
        if loaded.damage or loaded.torn_tail:
            if not self.repair:
                message = f"{path}: left open and damaged; not ended (start with repair)"
                log.warning(message)
                self.problems.append(message)
                return
            repaired = self.load_for_append(path)
            if repaired is None or repaired.game.over:
                return
            loaded = repaired
        ending = Ending(EndingKind.ABANDONED, None, max(at, loaded.game.started_at))
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        try:
            self._append(fd, encode(ending_record(ending)))
        finally:
            os.close(fd)
        log.warning(
            "game %d was left open by a NEW GAME cut short: recorded as abandoned",
            loaded.game.id,
        )
        self.abandoned.append(loaded.game.id)

    def load_for_append(self, path: Path) -> LoadedGame | None:
        """``path``'s game, its torn tail set aside, salvaged if damaged (with
        ``repair``); None when nothing of it was intact (the file is set aside).

        :raises CorruptDataError: damaged, without ``repair``.
        """
        try:
            loaded = load_game(path)
        except CorruptDataError as exc:
            if not self.repair:
                raise
            aside = path.with_name(f"{path.name}.corrupt-{int(time.time())}")
            os.replace(path, aside)
            fsync_path(path.parent)
            message = f"{exc}: nothing intact; the file is saved as {aside.name}"
            log.error(message)
            self.problems.append(message)
            return None
        if loaded.damage:
            if not self.repair:
                first = loaded.damage[0]
                raise CorruptDataError(path, first.line, first.reason, loaded.game)
            self._salvage(path, loaded)
            loaded = load_game(path)
        if loaded.torn_tail:
            # Never acknowledged (no newline reached the disk): keep the bytes aside.
            tail = path.read_bytes()[loaded.good_bytes :]
            aside = path.with_name(f"{path.name}.torn-{int(time.time())}")
            write_durably(aside, tail)
            os.truncate(path, loaded.good_bytes)
            fsync_path(path)
            message = (
                f"{path}: dropped an unfinished write ({len(tail)} bytes, kept in {aside.name})"
            )
            log.warning(message)
            self.problems.append(message)
        return loaded

    def _salvage(self, path: Path, loaded: LoadedGame) -> None:
        """Rewrite a damaged journal with its intact lines, an ``unreadable``
        line standing for each lost challenge; the original is kept aside."""
        aside = path.with_name(f"{path.name}.corrupt-{int(time.time())}")
        write_durably(aside, path.read_bytes())
        game = loaded.game
        payload = b"".join(encode(r) for r in records_of(game))
        write_durably(path, payload)
        lost = ", ".join(map(str, game.unreadable)) or "none"
        message = (
            f"{path}: could not read {'; '.join(map(str, loaded.damage))}. "
            f"Kept all {len(game.challenges)} intact challenge(s) of game {game.id}; "
            f"unreadable challenge(s): {lost} (their pieces are unknown); "
            f"the original file is saved as {aside.name}"
        )
        log.error(message)
        self.problems.append(message)


def peek(path: Path) -> tuple[bool, float | None]:
    """Cheaply, without reading the whole game: (ended for sure, start time if readable)."""
    try:
        data = path.read_bytes()
    except OSError:
        return False, None
    lines = data.split(b"\n")
    started: float | None = None
    with contextlib.suppress(ValueError, KeyError, TypeError, UnicodeDecodeError):
        header = decode(lines[0].removesuffix(b"\r"))
        if header.get("t") == "game" and header.get("format") == FORMAT_VERSION:
            started = float(header["started_at"])
    over = False
    if len(lines) >= 2 and lines[-1] == b"":  # the last line is complete
        with contextlib.suppress(ValueError, UnicodeDecodeError):
            last = decode(lines[-2].removesuffix(b"\r"))
            over = last.get("t") in ("end", "reveal") or bool(
                last.get("t") == "challenge" and last.get("fallen_flag")
            )
    return over, started
