"""Child process for the NEW GAME crash test: dies by SIGKILL inside NEW GAME.

Usage: ``new_game_child.py DATA_DIR WHEN``. Records one challenge, then starts a
new game but kills itself at one of NEW GAME's two inner moments: ``ending``
(just before the old game's "abandoned" line is written: the new journal is only
staged) or ``rename`` (the ending is durable, the new journal not yet in place).
Prints ``killed`` and whether the new game's journal was listed at that moment.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

from arbiter.rules.contenders import Contenders
from arbiter.rules.pieces import Piece
from arbiter.storage.journal import GameStore


def main(data_dir: str, when: str) -> None:
    store = GameStore(data_dir)
    store.accept(Contenders.untagged(Piece.parse("W:COL"), Piece.parse("B:MAJ")))
    new_path = store._path(store.current.id + 1)
    real_append, real_replace = store._append, os.replace

    def die() -> None:
        print("killed", new_path.exists(), flush=True)
        os.kill(os.getpid(), signal.SIGKILL)

    def append(fd: int, payload: bytes) -> None:
        if when == "ending" and b'"abandoned"' in payload:
            die()
        real_append(fd, payload)

    def replace(src: Any, dst: Any) -> None:
        if when == "rename" and Path(dst) == new_path:
            die()
        real_replace(src, dst)

    store._append = append  # type: ignore[method-assign]
    os.replace = replace  # type: ignore[assignment]
    store.new_game()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
