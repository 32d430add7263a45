"""Child process traced by :mod:`tests.support.crash`: plays a fixed plan on a store.

Usage: ``python crash_child.py DATA_DIR PLAN SEED [MUTATION]``. PLAN is a string of
steps: ``c`` accepts a challenge, ``n`` is NEW GAME, ``r`` declares a resignation.
After each step returns (is acknowledged) it prints ``ACK ...`` and flushes, so the
acknowledgement's ``write(1, ...)`` sits in the trace right after the step's calls.

MUTATION (optional) removes one ``os.fsync(fd)`` line from the journal's source,
to show that the explorer catches a missing fsync: ``append`` (in
``GameStore._append``) or ``rewrite`` (in ``_write_all_durably``).
"""

from __future__ import annotations

import inspect
import random
import sys
import textwrap
from collections.abc import Callable
from typing import Any

from arbiter.rules.contenders import Contenders
from arbiter.rules.game import ChallengeRefusedError, EndingKind
from arbiter.rules.pieces import Piece
from arbiter.rules.ranks import Rank, Side
from arbiter.storage import journal
from arbiter.storage.journal import GameStore


def _without_fsync(func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` recompiled in its module without its ``os.fsync(fd)`` line."""
    source = textwrap.dedent(inspect.getsource(func)).splitlines()
    kept = [line for line in source if line.strip() != "os.fsync(fd)"]
    if len(kept) != len(source) - 1:
        raise SystemExit(f"mutation: no single os.fsync(fd) line in {func.__name__}")
    namespace: dict[str, Any] = {}
    exec(compile("\n".join(kept), journal.__file__, "exec"), vars(journal), namespace)
    new: Callable[..., Any] = namespace[func.__name__]
    return new


def mutate(name: str) -> None:
    if name == "append":
        GameStore._append = _without_fsync(GameStore._append)  # type: ignore[method-assign]
    elif name == "rewrite":
        journal._write_all_durably = _without_fsync(journal._write_all_durably)
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
    store.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), *sys.argv[4:5])
