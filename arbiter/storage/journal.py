"""Durable storage of games: one fsynced, append-only journal file per game.

Why a journal and not SQLite: a challenge is one short line, so one
``write`` plus one ``fsync`` makes it durable (the same cost as SQLite's WAL
commit), every line carries its own CRC-32 so a damaged file is detected
line by line and everything before the damage is kept, and the files are
plain text a builder can read. A line is acknowledged only after it and its
newline are on disk; a tail without its newline is therefore a write that was
never acknowledged (power cut mid-write), and is moved aside, never counted.

Layout: ``DATA/games/000001.jsonl``; the lines and their records are
:mod:`arbiter.storage.codec`'s, and what opening mends (damaged files, torn tails,
writes cut short) is :mod:`arbiter.storage.salvage`'s. This module keeps the files
durable: the directory lock, fsynced appends, and the start of each new game.

Abandoned games sealed until the next game begins are
:mod:`arbiter.storage.sealing`'s; who is told of each durable append,
:mod:`arbiter.storage.listeners`'s.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from arbiter.rules.contenders import Contenders
from arbiter.rules.errors import EndingError
from arbiter.rules.game import Challenge, Ending, EndingKind, Game
from arbiter.rules.jsondata import JsonDict
from arbiter.rules.ranks import Side
from arbiter.storage.codec import (
    challenge_record,
    encode,
    ending_record,
    header_record,
    parse_game,
)
from arbiter.storage.datalock import DataDirLock
from arbiter.storage.durable import fsync_path, write_durably
from arbiter.storage.errors import (
    CorruptDataError,
    StoreError,
    StoreLockedError,
    UnknownGameError,
)
from arbiter.storage.listeners import AppendListeners
from arbiter.storage.paths import (
    make_private_dir,
    tighten_files,
)
from arbiter.storage.salvage import PENDING, Salvage
from arbiter.storage.sealing import SealedGames

# The errors are imported from here by the device, the web and the command line.
__all__ = [
    "CorruptDataError",
    "GameStore",
    "StoreError",
    "StoreLockedError",
    "UnknownGameError",
    "list_game_ids",
    "read_game",
]

log = logging.getLogger(__name__)

_SUFFIX = ".jsonl"


class GameStore:
    """The games in a data directory, with the current game open for appending.

    Holds an exclusive lock on the directory while open: one writer at a
    time. A game is always open: the first start creates game 1, and
    :meth:`new_game` starts the next.

    :param repair: when a journal is damaged, keep a byte-for-byte copy
        beside it (``.corrupt-<time>``), rewrite it with its intact prefix,
        log an error naming the file, and go on. Without it,
        :class:`CorruptDataError` is raised and nothing is touched.
    """

    def __init__(self, data_dir: str | os.PathLike[str], *, repair: bool = False) -> None:
        self.data_dir = Path(data_dir)
        self.games_dir = self.data_dir / "games"
        self.repair = repair
        #: What opening mended (:mod:`arbiter.storage.salvage`), for the page and the log.
        self._salvage = Salvage(self.games_dir, repair=repair,
                                append=lambda fd, payload: self._append(fd, payload))
        self.problems = self._salvage.problems
        self._lock = threading.RLock()
        #: Told of each append made durable (the broker's outbox): :class:`AppendListeners`.
        self.appends = AppendListeners()
        try:
            self._make_private()
        except OSError as exc:
            raise StoreError(f"cannot use data directory {self.data_dir}: {exc}") from None
        lock = DataDirLock.take(self.data_dir)
        assert lock is not None  # taken with create=True
        self._dir_lock = lock
        self._fd: int | None = None
        try:
            self._current = self._open_latest()
            #: Abandoned games whose ranks stay secret until the next game begins.
            self._sealed = SealedGames(self._path, self._salvage, self._append)
            self._sealed.find(self._current, [i for i in self.game_ids() if i < self._current.id],
                              lambda game_id: read_game(self.data_dir, game_id),
                              self._salvage.abandoned, time.time())
        except BaseException:
            self.close()
            raise

    def _make_private(self) -> None:
        """Data directory 0700 and its files 0600: the journals hold every rank."""
        looser = [
            f"{d} was {mode:04o}"
            for d in (self.data_dir, self.games_dir)
            if (mode := make_private_dir(d)) is not None
        ]
        files = tighten_files(self.data_dir) + tighten_files(self.games_dir)
        if looser or files:
            log.warning(
                "other accounts could read the game records: made private (%s%s)",
                "; ".join(looser) + (", now 0700" if looser else ""),
                f"{'; ' if looser else ''}{files} file(s) now 0600" if files else "",
            )

    # -- paths and listing -------------------------------------------------

    def _path(self, game_id: int) -> Path:
        return self.games_dir / f"{game_id:06d}{_SUFFIX}"

    def game_ids(self) -> list[int]:
        """Ids of all games in the directory, oldest first."""
        return sorted(_ids_in(self.games_dir))

    # -- opening -----------------------------------------------------------

    def _open_latest(self) -> Game:
        self._salvage.remove_temp_files()
        ids = self.game_ids()
        if not ids:
            return self._create(1)
        path = self._path(ids[-1])
        loaded = self._salvage.load_for_append(path)
        if loaded is None:
            game = self._create(self._next_id())
            older = ids
        else:
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            game = loaded.game
            older = ids[:-1]
        self._salvage.finish_new_games([self._path(i) for i in older], game.started_at)
        return game

    @property
    def sealed(self) -> tuple[int, ...]:
        """Ids of the abandoned games whose ranks stay secret until the next game begins."""
        with self._lock:
            return self._sealed.ids

    def reveal_abandoned(self) -> list[int]:
        """The next game has begun by the players' word (no challenge yet): reveal the
        sealed abandoned games. Returns their ids (none: nothing was sealed).

        :raises StoreError: a reveal could not be written (that game stays sealed).
        """
        with self._lock:
            wanted = len(self._sealed.ids)
            revealed = self._sealed.reveal(time.time())
        for game_id in revealed:
            self.appends.tell(game_id)
        if len(revealed) < wanted:
            raise StoreError(f"could not record the reveal in {self.games_dir}: see the log")
        return revealed

    def _next_id(self) -> int:
        # Count files set aside too, so a salvaged game's id is never reused
        # (temp files are not games: a NEW GAME cut short reuses its number).
        used = [
            int(p.name[:6])
            for p in self.games_dir.iterdir()
            if p.name[:6].isdigit() and not p.name.endswith((".tmp", PENDING))
        ]
        return max(used, default=0) + 1

    def _create(self, game_id: int, assignment: JsonDict | None = None) -> Game:
        # Header written to a temp file and renamed: a crash never leaves an empty journal.
        game = Game(id=game_id, started_at=time.time(), assignment=assignment)
        path = self._path(game_id)
        try:
            write_durably(path, encode(header_record(game)))
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        except OSError as exc:
            raise StoreError(f"cannot create {path}: {exc}") from None
        if self._fd is not None:
            os.close(self._fd)
        self._fd = fd
        return game

    # -- writing -----------------------------------------------------------

    def _append(self, fd: int, payload: bytes) -> None:
        size = os.fstat(fd).st_size
        try:
            written = os.write(fd, payload)
            if written != len(payload):
                raise OSError(f"short write ({written} of {len(payload)} bytes)")
            os.fsync(fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, size)
            raise StoreError(f"could not record to {self.games_dir}: {exc}") from None

    @property
    def current(self) -> Game:
        """The game being played (or just finished, until a new game starts)."""
        return self._current

    def accept(self, contenders: Contenders) -> Challenge:
        """Check a challenge, make it durable, then add it to the current game.

        :raises ChallengeRefusedError: nothing recorded.
        :raises StoreError: the disk refused the write; nothing recorded.
        """
        with self._lock:
            game = self._current
            verdict = game.check(contenders)
            challenge = Challenge(
                number=game.challenge_count + 1,
                contenders=contenders,
                verdict=verdict,
                at=time.time(),
            )
            assert self._fd is not None
            self._append(self._fd, encode(challenge_record(challenge)))
            game.apply(challenge)
            # Only after the challenge is durable: the next game has begun.
            revealed = self._sealed.reveal(challenge.at)
        self.appends.tell(game.id)
        for game_id in revealed:
            self.appends.tell(game_id)
        return challenge

    def declare_end(self, kind: EndingKind, winner: Side | None) -> Ending:
        """Record a declared ending (flag home, resignation, draw).

        :raises EndingError: not a declarable ending, a bad winner, or the game is over.
        """
        if not kind.declarable:
            raise EndingError(f"{kind.value} is not an ending players declare")
        with self._lock:
            game_id = self._current.id
            ending = self._end(Ending(kind, winner, time.time()))
            # A game ended by the players' word was played: the one abandoned before it
            # may be revealed.
            revealed = self._sealed.reveal(ending.at)
        self.appends.tell(game_id)
        for old_id in revealed:
            self.appends.tell(old_id)
        return ending

    def _end(self, ending: Ending) -> Ending:
        game = self._current
        if game.over:
            raise EndingError(f"game {game.id} is already over")
        assert self._fd is not None
        self._append(self._fd, encode(ending_record(ending)))
        game.end(ending)
        return ending

    def new_game(self, assignment: JsonDict | None = None) -> Game:
        """Start the next game; one still on is recorded as abandoned.

        :param assignment: a tournament's round, board and players, kept in
            the new game's header (so its record carries the names).

        The order is what a reader beside the store (the broker's outbox, a
        page) relies on: every game but the newest is over. (1) The new header
        is made durable under a name no reader lists (``.pending``), so a full
        disk fails here with nothing changed; (2) the old game's ending is made
        durable; (3) only then is the new journal renamed into place. A crash
        before (3) leaves the old game current (ended or not): the pending file
        is removed at the next start, as a NEW GAME never acknowledged.

        :raises StoreError: the new game could not be recorded. The old game is
            still current; it is recorded as abandoned only if the failure came
            after its ending was made durable (a rename refused).
        """
        with self._lock:
            old_game, old_fd = self._current, self._fd
            game = Game(id=self._next_id(), started_at=time.time(), assignment=assignment)
            path = self._path(game.id)
            pending = path.with_name(path.name + PENDING)
            try:
                write_durably(pending, encode(header_record(game)))
            except OSError as exc:
                raise StoreError(f"cannot create {path}: {exc}") from None
            ended_old = not old_game.over
            if ended_old:
                abandoned = Ending(EndingKind.ABANDONED, None, game.started_at)
                try:
                    assert old_fd is not None
                    self._append(old_fd, encode(ending_record(abandoned)))
                except StoreError:
                    with contextlib.suppress(OSError):
                        os.unlink(pending)
                    raise
                old_game.end(abandoned)
            try:
                os.replace(pending, path)
                fsync_path(self.games_dir)
                fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.unlink(pending)
                raise StoreError(f"cannot create {path}: {exc}") from None
            if old_fd is not None:
                os.close(old_fd)
            self._fd = fd
            self._current = game
            if old_game.sealed:
                self._sealed.add(old_game.id)  # secret until the next game begins
        if ended_old:
            self.appends.tell(old_game.id)
        self.appends.tell(game.id)
        return game

    # -- reading -----------------------------------------------------------

    def get(self, game_id: int) -> Game:
        """Any game by id (the current one from memory).

        :raises UnknownGameError: no such game.
        :raises CorruptDataError: its file is damaged.
        """
        with self._lock:
            if game_id == self._current.id:
                return self._current
        return read_game(self.data_dir, game_id)

    def close(self) -> None:
        """Close the journal and release the directory; safe to call twice."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None
            self._dir_lock.release()

    def __enter__(self) -> GameStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _ids_in(games_dir: Path) -> Iterator[int]:
    for entry in games_dir.glob(f"*{_SUFFIX}"):
        if entry.stem.isdigit():
            yield int(entry.stem)


def read_game(data_dir: str | os.PathLike[str], game_id: int) -> Game:
    """Read a game without opening the store for writing (safe beside a running arbiter).

    :raises UnknownGameError: no such game.
    :raises CorruptDataError: its file is damaged (``valid`` holds the part before the damage).
    """
    path = Path(data_dir) / "games" / f"{game_id:06d}{_SUFFIX}"
    if not path.exists():
        raise UnknownGameError(f"no game {game_id} in {Path(data_dir)}")
    data = path.read_bytes()
    loaded = parse_game(path, data)
    if loaded.damage:
        # Not repaired yet (only the store repairs): what is shown of it is
        # only the part before the damage, as before.
        first = loaded.damage[0]
        try:
            valid: Game | None = parse_game(path, data[: first.offset]).game
        except CorruptDataError:
            valid = None
        raise CorruptDataError(path, first.line, first.reason, valid)
    return loaded.game


def list_game_ids(data_dir: str | os.PathLike[str]) -> list[int]:
    """Ids of the games in a data directory, oldest first (read-only)."""
    games_dir = Path(data_dir) / "games"
    return sorted(_ids_in(games_dir)) if games_dir.is_dir() else []
