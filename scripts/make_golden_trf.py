"""Make the TRF golden files: events as bbpPairings' generator writes them, and its check
of what this project exports from them.

Usage: python scripts/make_golden_trf.py ENGINE [--out tests/tournament/golden/trf]

ENGINE is a bbpPairings binary. For each event of EVENTS it writes:

* ``NAME.trf``: ``ENGINE --dutch -g CONFIG -o NAME.trf -s SEED``, byte for byte: a whole
  event every round of which the engine paired by the Dutch system, with forfeits
  (``+``/``-``), half-point byes (``H``), zero-point byes of retired players (``Z``),
  pairing-allocated byes (``U``), CR line endings and no ``XXR``;
* ``NAME.export.trf``: that file imported and exported by arbiter.tournament.trf;
* ``NAME.check.txt``: what ``ENGINE --dutch NAME.export.trf -c`` printed of it (one
  ``Round #k`` line a round, and a table "Checker pairings / Tournament pairings" for
  each round it would have paired otherwise).

tests/tournament/test_trf_golden.py replays every round with our pairing and requires
the engine's, requires the export to be the one checked, and the check to be clean.
Engine code never enters the repository: only its output.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from arbiter.tournament.trf import export_trf, import_trf  # noqa: E402

#: (players, rounds, ForfeitRate, HalfPointByeRate, RetiredRate, seed). A rate r means
#: about one in r (games forfeited, players with a half-point bye, players retiring).
EVENTS = [
    (17, 5, 5, 20, 30, 11),
    (20, 7, 10, 10, 20, 1),
    (20, 7, 10, 10, 20, 2),
    (30, 9, 15, 8, 10, 7),
    (41, 9, 8, 12, 15, 8),
    (64, 11, 20, 10, 25, 9),
    (101, 9, 12, 6, 20, 10),
]


def name_of(players: int, rounds: int, forfeit: int, half: int, retired: int, seed: int) -> str:
    return f"gen-{players:03d}p-{rounds}r-f{forfeit}-h{half}-r{retired}-seed{seed}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("engine")
    ap.add_argument("--out", default=str(ROOT / "tests/tournament/golden/trf"))
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for players, rounds, forfeit, half, retired, seed in EVENTS:
        name = name_of(players, rounds, forfeit, half, retired, seed)
        with tempfile.TemporaryDirectory() as tmp:
            config = Path(tmp, "config.txt")
            config.write_text(
                f"PlayersNumber={players}\nRoundsNumber={rounds}\nForfeitRate={forfeit}\n"
                f"HalfPointByeRate={half}\nRetiredRate={retired}\n",
                encoding="ascii",
            )
            subprocess.run(
                [args.engine, "--dutch", "-g", str(config), "-o", str(out / f"{name}.trf"),
                 "-s", str(seed)],
                check=True,
            )
        text = (out / f"{name}.trf").read_bytes().decode("utf-8")
        event = import_trf(text)
        exported = out / f"{name}.export.trf"
        exported.write_text(
            export_trf(event.name, event.players, event.games, rounds, event.initial),
            encoding="utf-8",
        )
        check = subprocess.run(
            [args.engine, "--dutch", str(exported), "-c"], capture_output=True, text=True,
            check=True,
        )
        (out / f"{name}.check.txt").write_text(check.stdout, encoding="utf-8")
        print(name, "differs" if "Checker pairings" in check.stdout else "checked clean")


if __name__ == "__main__":
    main()
