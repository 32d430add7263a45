"""Child process for the kill -9 test: accepts challenges forever, reporting each.

Prints ``ok game_id number attacker defender end`` after each accept returns;
a line without its final ``end`` was cut by the kill.
"""

from __future__ import annotations

import random
import sys

from arbiter.rules.contenders import Contenders
from arbiter.rules.errors import ChallengeRefusedError
from arbiter.rules.pieces import Piece
from arbiter.rules.ranks import Rank, Side
from arbiter.storage.journal import GameStore


def main(data_dir: str, seed: int) -> None:
    rng = random.Random(seed)
    ranks = [r for r in Rank if r is not Rank.FLAG]
    store = GameStore(data_dir)
    while True:
        side = rng.choice(list(Side))
        for _ in range(50):
            attacker = Piece(side, rng.choice(ranks))
            defender = Piece(side.opponent, rng.choice(ranks))
            try:
                store.current.check(Contenders.untagged(attacker, defender))
            except ChallengeRefusedError:
                continue
            break
        else:
            store.new_game()
            print("new", store.current.id, "end", flush=True)
            continue
        challenge = store.accept(Contenders.untagged(attacker, defender))
        print(
            "ok", store.current.id, challenge.number, challenge.attacker, challenge.defender, "end",
            flush=True,
        )


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
