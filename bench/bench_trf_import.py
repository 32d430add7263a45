"""Benchmark ``gg-arbiter hub import-trf``: time and peak memory for the files an
organiser brings, and for one no event needs.

Run: .venv/bin/python bench/bench_trf_import.py [--rounds 9]

Writes three files and imports each into a fresh ledger in its own process, printing
the exit status, the wall time and the process's peak resident memory (ru_maxrss):
a 1,000-player event with ``--rounds`` rounds played (top half against bottom half,
a new opponent each round, random results), the format's 9,999 players before round 1,
and 50 MB of player lines. The last is refused by its size before it is read (it took
813 MB when the whole file was read); the interpreter and its imports alone are
about 55 MB.
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arbiter.tournament.model import Game, Pairing, Player, Result
from arbiter.tournament.trf import export_trf

#: Runs a command and prints its peak resident memory in KB (Linux: ru_maxrss is in KB).
_MEASURE = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:], capture_output=True).returncode\n"
    "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def event_file(players: int, rounds: int, seed: int = 1) -> str:
    """A TRF text of ``players`` (an even number when ``rounds`` are played)."""
    rng = random.Random(seed)
    entrants = [Player(f"Player {i:04d}, Firstname", 2400 - i % 2000) for i in range(players)]
    half = players // 2
    games: list[Game] = []
    for r in range(1, rounds + 1):
        for board in range(half):
            top, bottom = entrants[board].name, entrants[half + (board + r) % half].name
            white, black = (top, bottom) if (board + r) % 2 else (bottom, top)
            result = rng.choice([Result.WHITE_WIN, Result.BLACK_WIN, Result.DRAW])
            games.append(Game(Pairing(r, board + 1, white, black), result))
    return export_trf("Bench open", entrants, games, rounds + 2)


def measure(path: Path, data: Path) -> tuple[int, float, int]:
    """(exit status, seconds, peak KB) of importing ``path`` into a ledger in ``data``."""
    command = [sys.executable, "-m", "arbiter.app.cli", "hub", "--event", "bench",
               "--data", str(data), "import-trf", str(path)]
    begun = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _MEASURE, *command], capture_output=True,
                         text=True, check=True).stdout.split()
    return int(out[0]), time.perf_counter() - begun, int(out[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9, help="rounds of the 1,000-player file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = {
            f"1,000 players, {args.rounds} rounds": event_file(1000, args.rounds).encode(),
            "9,999 players, before round 1": event_file(9999, 0).encode(),
        }
        paths: dict[str, Path] = {}
        for label, body in files.items():
            paths[label] = root / f"{len(paths)}.trf"
            paths[label].write_bytes(body)
        huge = root / "huge.trf"
        line = files["9,999 players, before round 1"].splitlines(keepends=True)[3]
        with huge.open("wb") as f:
            while f.tell() < 50 * 1024 * 1024:
                f.write(line * 1000)
        paths["50 MB of player lines"] = huge
        for n, (label, path) in enumerate(paths.items()):
            code, seconds, peak = measure(path, root / f"data{n}")
            size = path.stat().st_size / 1024
            print(f"{label:32} {size:9.0f} KB  exit {code}  {seconds:5.2f} s"
                  f"  peak {peak / 1024:6.1f} MB")


if __name__ == "__main__":
    main()
