"""Child process traced by :mod:`tests.support.crash`: plays a fixed plan on a store.

Usage: ``python crash_child.py DATA_DIR PLAN SEED [MUTATION]``. PLAN is a string of
steps: ``c`` accepts a challenge, ``n`` is NEW GAME, ``r`` declares a resignation,
``t`` enrolls the next physical piece's tag in the tag registry (``tags.json``).
After each step returns (is acknowledged) it prints ``ACK ...`` and flushes, so the
acknowledgement's ``write(1, ...)`` sits in the trace right after the step's calls.

MUTATION (optional) removes one ``os.fsync(fd)`` line from the journal's source,
to show that the explorer catches a missing fsync: ``append`` (in
``GameStore._append``), ``rewrite`` (in ``storage.durable.write_durably``) or ``registry``
(the tag registry's, also ``write_durably``). ``order`` instead puts back NEW GAME's
order before issue 19 (the new journal made first, the old game ended after it), to
show that the explorer's outbox check catches a game published out of order.
"""

from __future__ import annotations

import inspect
import os
import random
import sys
import textwrap
from collections.abc import Callable
from types import ModuleType
from typing import Any

from arbiter.rules.army import all_physical_pieces
from arbiter.rules.contenders import Contenders
from arbiter.rules.errors import ChallengeRefusedError
from arbiter.rules.game import Ending, EndingKind, Game
from arbiter.rules.jsondata import JsonDict
from arbiter.rules.pieces import Piece
from arbiter.rules.ranks import Rank, Side
from arbiter.storage import durable, journal, registry
from arbiter.storage.codec import encode, ending_record
from arbiter.storage.journal import GameStore
from arbiter.storage.registry import TagRegistry


def _without_fsync(
    func: Callable[..., Any], module: ModuleType = journal, line: str = "os.fsync(fd)"
) -> Callable[..., Any]:
    """``func`` recompiled in its module without its fsync ``line``."""
    source = textwrap.dedent(inspect.getsource(func)).splitlines()
    kept = [text for text in source if text.strip() != line]
    if len(kept) != len(source) - 1:
        raise SystemExit(f"mutation: no single {line} line in {func.__name__}")
    namespace: dict[str, Any] = {}
    assert module.__file__ is not None
    exec(compile("\n".join(kept), module.__file__, "exec"), vars(module), namespace)
    new: Callable[..., Any] = namespace[func.__name__]
    return new


def _new_game_before_issue_19(self: GameStore, assignment: JsonDict | None = None) -> Game:
    """NEW GAME as it was before issue 19: the new journal first, then the old game's end."""
    with self._lock:
        old_game, old_fd = self._current, self._fd
        self._fd = None  # _create must not close the old journal yet
        game = self._create(self._next_id(), assignment)
        if not old_game.over:
            abandoned = Ending(EndingKind.ABANDONED, None, game.started_at)
            assert old_fd is not None
            self._append(old_fd, encode(ending_record(abandoned)))
            old_game.end(abandoned)
        if old_fd is not None:
            os.close(old_fd)
        self._current = game
        if old_game.sealed:  # secret until the next game begins, as the store ships it
            self._sealed.add(old_game.id)
        return game


def mutate(name: str) -> None:
    if name == "order":
        GameStore.new_game = _new_game_before_issue_19  # type: ignore[method-assign]
    elif name == "append":
        GameStore._append = _without_fsync(GameStore._append)  # type: ignore[method-assign]
    elif name == "rewrite":
        # The journal's whole-file rewrite goes through storage.durable.write_durably.
        journal.write_durably = _without_fsync(durable.write_durably, durable)  # type: ignore[attr-defined]
    elif name == "registry":
        # The registry writes through the same storage.durable.write_durably.
        registry.write_durably = _without_fsync(durable.write_durably, durable)  # type: ignore[attr-defined]
    elif name:
        raise SystemExit(f"unknown mutation {name!r}")


def _challenge(store: GameStore, rng: random.Random) -> Contenders | None:
    ranks = [r for r in Rank if r is not Rank.FLAG]
    for _ in range(100):
        side = rng.choice(list(Side))
        contenders = Contenders.untagged(
            Piece(side, rng.choice(ranks)), Piece(side.opponent, rng.choice(ranks))
        )
        try:
            store.current.check(contenders)
        except ChallengeRefusedError:
            continue
        return contenders
    return None


def _ack(*parts: object) -> None:
    # One write per acknowledgement, even with PYTHONUNBUFFERED (print writes each part).
    sys.stdout.write(" ".join(["ACK", *map(str, parts)]) + "\n")
    sys.stdout.flush()


def main(data_dir: str, plan: str, seed: int, mutation: str = "") -> None:
    mutate(mutation)
    rng = random.Random(seed)
    store = GameStore(data_dir, repair=True)
    tags = TagRegistry.in_directory(data_dir)
    unenrolled = iter(p for p in all_physical_pieces() if tags.tag_of(p) is None)
    _ack("open", store.current.id)
    for step in plan:
        if step == "c":
            contenders = _challenge(store, rng)
            if contenders is None:  # this game is over or has nothing left to meet
                continue
            ch = store.accept(contenders)
            _ack("c", store.current.id, ch.number, ch.attacker, ch.defender)
        elif step == "n":
            _ack("n", store.new_game().id)
        elif step == "r" and not store.current.over:
            store.declare_end(EndingKind.RESIGNATION, rng.choice(list(Side)))
            _ack("r", store.current.id)
        elif step == "t" and (piece := next(unenrolled, None)) is not None:
            tag = f"{rng.getrandbits(40):010X}"
            _ack("t", tag, tags.enroll(tag, piece))
    store.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), *sys.argv[4:5])
