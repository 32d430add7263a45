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

Then the same event through the hub's ledger, as an organiser continues it (see
:func:`hub_round`): ``NAME.trf`` imported, the event extended by a round, the players who
retired in the last round withdrawn, a half-point bye given for the next round, exported
(``NAME.hub-pre.trf``), paired by the hub, given results with a forfeit each way and a
double forfeit, exported again (``NAME.hub-post.trf``). Written beside them:

* ``NAME.hub-next.txt``: ``ENGINE --dutch NAME.hub-pre.trf -p``, the engine's pairing of
  the next round from the hub's file (start ranks, ``0`` for the bye);
* ``NAME.hub.json``: what the organiser did (the bye, the withdrawals, the results by
  board, as the hub paired it);
* ``NAME.hub-check.txt``: ``ENGINE --dutch NAME.hub-post.trf -c``.

tests/tournament/test_trf_golden.py replays every round with our pairing and requires
the engine's, requires the export to be the one checked, and the check to be clean;
tests/hub/test_hub_trf_golden.py replays the organiser's steps on a ledger and requires
the engine's pairing, the same two exports, and the check clean.
Engine code never enters the repository: only its output.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from arbiter.hub.exports import trf  # noqa: E402
from arbiter.hub.ledger import Ledger  # noqa: E402
from arbiter.tournament.model import Bye, Colour, Result  # noqa: E402
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


#: The results the organiser gives the hub's round, by board (``board % 6``): the codes of
#: ``NAME.hub.json``. "+/-" White won by forfeit, "-/+" Black did, "-/-" neither came.
RESULT_CYCLE = ("1-0", "+/-", "1/2-1/2", "0-1", "-/-", "-/+")


def hub_plan(event_text: str) -> dict[str, Any]:
    """What the organiser does before the pairing: withdraw the players whose last round
    was a zero-point bye (retired), and give the first other player from the middle of
    the start list a half-point bye for the next round."""
    event = import_trf(event_text)
    last = max(g.pairing.round for g in event.games)
    retired = sorted({g.pairing.white for g in event.games
                      if g.pairing.round == last and g.bye is Bye.ZERO and g.pairing.is_bye})
    names = [p.name for p in event.players]
    middle = next(n for n in names[len(names) // 2:] if n not in retired)
    return {"rounds": last + 1, "withdraw": retired, "bye": middle}


def apply_result(ledger: Ledger, round_number: int, board: int, code: str) -> None:
    """One board's result as the organiser records it (a forfeit, or a correction)."""
    if code in ("+/-", "-/+", "-/-"):
        came = {"+/-": Colour.WHITE, "-/+": Colour.BLACK, "-/-": None}[code]
        ledger.unplayed.forfeit(round_number, board, came, "golden")
    else:
        ledger.admin.correct_result(round_number, board, Result(code), "golden")


def hub_before_pairing(ledger: Ledger, event_text: str, plan: dict[str, Any]) -> str:
    """Import, extend, withdraw, give the bye: the hub's TRF the engine pairs from."""
    event = import_trf(event_text)
    ledger.unplayed.import_event(event.players, event.games, event.total_rounds)
    ledger.admin.set_total_rounds(plan["rounds"], "golden")
    for name in plan["withdraw"]:
        ledger.admin.withdraw(name, "golden")
    ledger.unplayed.request_bye(plan["bye"], plan["rounds"], "golden")
    return trf(ledger)


def hub_round(engine: str, out: Path, name: str) -> None:
    """The hub's files of one event (see the module's docstring)."""
    text = (out / f"{name}.trf").read_bytes().decode("utf-8")
    plan = hub_plan(text)
    with tempfile.TemporaryDirectory() as tmp, Ledger(Path(tmp, "e.sqlite"), "golden") as ledger:
        pre = hub_before_pairing(ledger, text, plan)
        (out / f"{name}.hub-pre.trf").write_text(pre, encoding="utf-8")
        subprocess.run(
            [engine, "--dutch", str(out / f"{name}.hub-pre.trf"), "-p",
             str(out / f"{name}.hub-next.txt")], check=True)
        pairings = ledger.admin.pair_round("swiss")
        results: list[tuple[int, str]] = [
            (p.board, RESULT_CYCLE[p.board % len(RESULT_CYCLE)])
            for p in pairings if p.black is not None]
        for board, code in results:
            apply_result(ledger, plan["rounds"], board, code)
        (out / f"{name}.hub-post.trf").write_text(trf(ledger), encoding="utf-8")
    plan["results"] = results
    (out / f"{name}.hub.json").write_text(json.dumps(plan) + "\n", encoding="utf-8")
    check = subprocess.run(
        [engine, "--dutch", str(out / f"{name}.hub-post.trf"), "-c"], capture_output=True,
        text=True, check=True)
    (out / f"{name}.hub-check.txt").write_text(check.stdout, encoding="utf-8")
    print(name, "hub:", "differs" if "Checker pairings" in check.stdout else "checked clean")


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
        hub_round(args.engine, out, name)


if __name__ == "__main__":
    main()
