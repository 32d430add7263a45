"""A reader racing NEW GAME (issue 19): the outbox derives the journals between every two
writes of the store, and no ending is passed over, no sequence number changes its content.

The race is made deterministic: every write, fsync-ed rewrite and rename the journal does
is followed, before the store goes on, by a pass of a publisher (the outbox's derivation
from its cursor, as the table's link does), so every point between two writes is tried.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from arbiter.fleet.outbox import Cursor, Outbox
from arbiter.fleet.payloads import event_payload
from arbiter.rules.contenders import Contenders
from arbiter.rules.errors import ChallengeRefusedError
from arbiter.rules.game import EndingKind
from arbiter.rules.pieces import Piece
from arbiter.rules.ranks import Rank, Side
from arbiter.storage import journal
from arbiter.storage.journal import GameStore, list_game_ids
from tests.support.crash_child import _new_game_before_issue_19

NEW_GAMES = 40


class Publisher:
    """The link's publisher without the network: each pass publishes what is pending
    after its cursor and moves the cursor (every message acknowledged at once)."""

    def __init__(self, data: Path) -> None:
        self.outbox = Outbox(data)
        self.cursor = Cursor()
        self.published: list[tuple[int, str]] = []  # (seq, payload) of each event
        self.passes = 0

    def run(self) -> None:
        self.passes += 1
        for pending in self.outbox.pending(self.cursor, 1000):
            if pending.seq is not None:
                payload = event_payload(pending.item, table="7", seq=pending.seq)
                self.published.append((pending.seq, json.dumps(payload, sort_keys=True)))
            self.cursor = pending.after


def _after_each_write(monkeypatch: pytest.MonkeyPatch, reader: Callable[[], None]) -> None:
    real_append, real_replace = GameStore._append, os.replace
    real_durably = journal.write_durably  # type: ignore[attr-defined]

    def append(store: GameStore, fd: int, payload: bytes) -> None:
        real_append(store, fd, payload)
        reader()

    def durably(path: Path, payload: bytes) -> None:
        real_durably(path, payload)
        reader()

    def replace(src: Any, dst: Any, **kw: Any) -> None:
        real_replace(src, dst, **kw)
        reader()

    monkeypatch.setattr(GameStore, "_append", append)
    monkeypatch.setattr(journal, "write_durably", durably)
    monkeypatch.setattr(os, "replace", replace)


def _challenge(store: GameStore, rng: random.Random) -> None:
    ranks = list(Rank)
    for _ in range(50):
        side = rng.choice(list(Side))
        pair = Contenders.untagged(Piece(side, rng.choice(ranks)),
                                   Piece(side.opponent, rng.choice(ranks)))
        try:
            store.accept(pair)
        except ChallengeRefusedError:
            continue
        return


@pytest.mark.parametrize("order", ["as shipped", "before issue 19"])
def test_outbox_race_a_reader_between_every_two_writes_of_new_game_misses_no_ending(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, order: str
) -> None:
    # "before issue 19": the journal's old order (the new game's file first), which a
    # journal from an older version or a crash can still leave: the outbox alone must hold.
    if order != "as shipped":
        monkeypatch.setattr(GameStore, "new_game", _new_game_before_issue_19)
    publisher = Publisher(tmp_path)
    rng = random.Random(19)
    store = GameStore(tmp_path)
    _after_each_write(monkeypatch, publisher.run)
    try:
        for n in range(NEW_GAMES):
            for _ in range(rng.randrange(3)):
                if not store.current.over:
                    _challenge(store, rng)
            if n % 5 == 4 and not store.current.over:
                store.declare_end(EndingKind.RESIGNATION, rng.choice(list(Side)))
            store.new_game()
    finally:
        store.close()
    publisher.run()
    assert publisher.passes > 3 * NEW_GAMES  # it really read between the writes

    # Every game but the last ended, and its ending went out, once, before the next game.
    kinds = [(json.loads(p)["game"], json.loads(p)["type"]) for _, p in publisher.published]
    games = list_game_ids(tmp_path)
    assert len(games) == NEW_GAMES + 1
    for game in games[:-1]:
        assert kinds.count((game, "game_over")) == 1, f"game {game}'s ending never published"
        assert kinds.index((game, "game_over")) < kinds.index((game + 1, "new_game"))
    # The numbers run 1, 2, 3... and a fresh derivation (a restart with no cursor, a
    # resend) gives every number the same content.
    assert [seq for seq, _ in publisher.published] == list(
        range(1, len(publisher.published) + 1))
    fresh = Publisher(tmp_path)
    fresh.run()
    assert fresh.published == publisher.published
