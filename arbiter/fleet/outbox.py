"""The outbox: messages derived from the game journals, and the durable cursor.

The journals are the outbox: nothing is queued beside them, so a message
can be lost only with the game itself. Each event gets the next sequence
number of the table; the cursor (``DATA/broker-cursor.json``) holds the last
position the broker acknowledged and the sequence number used up to there.
Everything after the cursor is derived again the same way after a restart,
so an event sent but not acknowledged before a crash goes out again with the
same sequence number, and an acknowledged one never goes out again.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from pathlib import Path

from arbiter import wire
from arbiter.fleet.errors import CursorError
from arbiter.fleet.payloads import OutboxItem, game_items
from arbiter.rules.game import Game
from arbiter.storage.durable import write_durably
from arbiter.storage.journal import (
    CorruptDataError,
    UnknownGameError,
    list_game_ids,
    read_game,
)

log = logging.getLogger(__name__)

CURSOR_FILE = "broker-cursor.json"


@dataclass(frozen=True)
class Cursor:
    """Items of games before ``game``, and of ``game`` before ``index``, are acknowledged;
    ``seq`` is the sequence number of the last acknowledged event (0: none yet)."""

    game: int = 0
    index: int = 0
    seq: int = 0

    def to_json(self) -> bytes:
        return json.dumps({"format": 1, "game": self.game, "index": self.index,
                           "seq": self.seq}).encode()


@dataclass(frozen=True)
class Pending:
    """An item to publish, its sequence number (None for a record) and the cursor after it."""

    item: OutboxItem
    seq: int | None
    after: Cursor


class CursorFile:
    """``DATA/broker-cursor.json``, replaced atomically and fsynced."""

    def __init__(self, data_dir: Path) -> None:
        self.path = Path(data_dir) / CURSOR_FILE

    def load(self) -> Cursor:
        """:raises CursorError: the file is there but damaged."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return Cursor(int(data["game"]), int(data["index"]), int(data["seq"]))
        except FileNotFoundError:
            return Cursor()
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CursorError(f"{self.path} is damaged ({exc}): move it aside to "
                              "publish every game again from sequence 1") from None

    def save(self, cursor: Cursor) -> None:
        """:raises OSError: not written (the old cursor stays)."""
        write_durably(self.path, cursor.to_json())


class Outbox:
    """Reads the journals of ``data_dir`` (beside the running store) into items.

    A game's items are cached while its file is unchanged: each journal is
    parsed again only when it has grown, and a game has at most a few dozen lines.

    Sequence numbers are given only to items that can never change place: a
    game's items only grow at its end, so those of an open game may be numbered
    only while no later game follows it. The walk therefore stops at the first
    game that is neither over nor the newest (or cannot be read): its ending, when
    it comes, is numbered before the next game's events, whatever the order in
    which the files reached the disk. It also stops after a sealed abandoned game's
    events: its record comes when the next game begins, and it must go out before
    the next game's events (which the cursor would otherwise pass it by).
    """

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)
        self._cache: dict[int, tuple[tuple[int, int], list[OutboxItem], bool]] = {}
        self._reported: set[int] = set()
        self._waiting: int | None = None

    def _items(self, game_id: int) -> tuple[list[OutboxItem], bool] | None:
        """The game's items and whether they are settled (over, or damaged: nothing
        is appended to a damaged journal); None: it cannot be read."""
        path = self.data_dir / "games" / f"{game_id:06d}.jsonl"
        try:
            stat = path.stat()
        except OSError:
            return None
        key = (stat.st_size, stat.st_mtime_ns)
        cached = self._cache.get(game_id)
        if cached is not None and cached[0] == key:
            return cached[1], cached[2]
        game: Game | None
        damaged = False
        try:
            game = read_game(self.data_dir, game_id)
        except CorruptDataError as exc:
            game, damaged = exc.valid, True
            if game_id not in self._reported:
                self._reported.add(game_id)
                log.error("broker: game %d's record is damaged; publishing its intact part: %s",
                          game_id, exc)
        except (UnknownGameError, OSError) as exc:
            log.warning("broker: cannot read game %d: %s", game_id, exc)
            return None
        if game is None:
            return None
        items = game_items(game)
        settled = (game.over and not game.sealed) or damaged
        self._cache = {k: v for k, v in self._cache.items() if k >= game_id}
        self._cache[game_id] = (key, items, settled)
        return items, settled

    def pending(self, after: Cursor, limit: int) -> list[Pending]:
        """Up to ``limit`` items after ``after``, in order, each with its sequence number."""
        out: list[Pending] = []
        seq = after.seq
        ids = [i for i in list_game_ids(self.data_dir) if i >= after.game]
        for place, game_id in enumerate(ids):
            read = self._items(game_id)
            if read is None:
                return out  # never skipped: a later game's events would take its numbers
            items, settled = read
            start = after.index if game_id == after.game else 0
            for item in items[start:]:
                if len(out) >= limit:
                    return out
                number: int | None = None
                if item.is_event:
                    seq += 1
                    number = seq
                out.append(Pending(item, number, Cursor(game_id, item.index + 1, seq)))
            if not settled and place < len(ids) - 1:
                # Over but not settled: a sealed game, its record still to come.
                self._wait_for(game_id, ids[-1],
                               sealed=items[-1].kind is wire.EventType.GAME_OVER)
                return out
        self._waiting = None
        return out

    def _wait_for(self, game_id: int, newest: int, *, sealed: bool) -> None:
        if self._waiting != game_id:
            self._waiting = game_id
            if sealed:  # the rule, not a fault: nothing to warn of
                log.info("broker: game %d was abandoned; its record and the next games'"
                         " events go out once the next game has begun", game_id)
                return
            log.warning("broker: game %d is still open though game %d follows it; later "
                        "games are published once it has its ending", game_id, newest)
