"""Child process for the NEW GAME crash test: dies by SIGKILL inside NEW GAME.

Records one challenge, then starts a new game but kills itself at the moment
the old game's "abandoned" line would be written: after the new journal's
rename, before the old game's ending (the window of issue 8, item 5).
"""

from __future__ import annotations

import os
import signal
import sys

from arbiter.rules.contenders import Contenders
from arbiter.rules.pieces import Piece
from arbiter.storage.journal import GameStore


def main(data_dir: str) -> None:
    store = GameStore(data_dir)
    store.accept(Contenders.untagged(Piece.parse("W:COL"), Piece.parse("B:MAJ")))
    real_append = store._append

    def append(fd: int, payload: bytes) -> None:
        if b'"abandoned"' in payload:
            print("killed", store._path(store.current.id + 1).exists(), flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        real_append(fd, payload)

    store._append = append  # type: ignore[method-assign]
    store.new_game()


if __name__ == "__main__":
    main(sys.argv[1])
