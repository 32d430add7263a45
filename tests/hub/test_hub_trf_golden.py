"""An event begun elsewhere, continued on the hub (issue 26): each generated event of
tests/tournament/golden/trf (bbpPairings' own files: forfeits, H/Z/U byes, retired
players, CR line endings, no XXR) imported into a ledger, extended by a round, its retired
players withdrawn and a half-point bye given, then paired by the hub exactly as
bbpPairings paired the hub's own export, and the export after the round's results (a
forfeit each way, a double forfeit) the one bbpPairings' check passed. The engine's
output was recorded by scripts/make_golden_trf.py (golden/trf/README.md)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

from arbiter.hub.exports import trf
from arbiter.hub.ledger import Ledger
from arbiter.tournament.model import Colour, Game, Result
from arbiter.tournament.trf import import_trf

GOLDEN = Path(__file__).parents[1] / "tournament" / "golden" / "trf"
EVENTS = sorted(p.name.removesuffix(".hub.json") for p in GOLDEN.glob("gen-*.hub.json"))
FORFEITS = {"+/-": Colour.WHITE, "-/+": Colour.BLACK, "-/-": None}


def _engine_pairs(name: str) -> set[tuple[int, int]]:
    """The engine's pairing of the next round, by start rank (0: the bye)."""
    lines = (GOLDEN / f"{name}.hub-next.txt").read_text(encoding="ascii").split()
    count, numbers = int(lines[0]), [int(n) for n in lines[1:]]
    assert len(numbers) == 2 * count
    return {(numbers[i], numbers[i + 1]) for i in range(0, len(numbers), 2)}


def _start_ranks(text: str) -> dict[str, int]:
    return {line[14:47].strip(): int(line[4:8]) for line in text.splitlines()
            if line.startswith("001")}


def test_the_events_hold_every_kind_of_unplayed_round() -> None:
    assert len(EVENTS) >= 5
    pre = "".join((GOLDEN / f"{n}.hub-pre.trf").read_text(encoding="utf-8") for n in EVENTS)
    post = "".join((GOLDEN / f"{n}.hub-post.trf").read_text(encoding="utf-8") for n in EVENTS)
    # Given ahead: the half-point bye, and a withdrawn player's round.
    assert re.search(r"0000 - H$", pre, re.M) and re.search(r"0000 - -$", pre, re.M)
    # In the hub's round: forfeits both ways and a double one.
    assert re.search(r"\d{4} [wb] \+$", post, re.M) and re.search(r"\d{4} [wb] -$", post, re.M)


@pytest.mark.parametrize("name", EVENTS)
def test_the_hub_continues_an_event_begun_elsewhere(tmp_path: Path, name: str) -> None:
    text = (GOLDEN / f"{name}.trf").read_bytes().decode("utf-8")
    plan = json.loads((GOLDEN / f"{name}.hub.json").read_text(encoding="utf-8"))
    event = import_trf(text)
    with Ledger(tmp_path / "event.sqlite", "golden") as ledger:
        ledger.unplayed.import_event(event.players, event.games, event.total_rounds)
        # What the file held stays as it was: every game, forfeit and bye.
        assert _kept(ledger.admin.games_for_pairing()) == _kept(event.games)
        ledger.admin.set_total_rounds(plan["rounds"], "org")
        for player in plan["withdraw"]:
            ledger.admin.withdraw(player, "org")
        ledger.unplayed.request_bye(plan["bye"], plan["rounds"], "org")
        pre = trf(ledger)
        assert pre == (GOLDEN / f"{name}.hub-pre.trf").read_text(encoding="utf-8")
        rank = _start_ranks(pre)
        pairings = ledger.admin.pair_round("swiss")
        ours = {(rank[p.white], 0 if p.black is None else rank[p.black]) for p in pairings}
        assert ours == _engine_pairs(name)
        assert plan["bye"] not in {n for p in pairings for n in (p.white, p.black)}
        for board, code in plan["results"]:
            if code in FORFEITS:
                ledger.unplayed.forfeit(plan["rounds"], board, FORFEITS[code], "org")
            else:
                ledger.admin.correct_result(plan["rounds"], board, Result(code), "org")
        assert trf(ledger) == (GOLDEN / f"{name}.hub-post.trf").read_text(encoding="utf-8")
    check = (GOLDEN / f"{name}.hub-check.txt").read_text(encoding="utf-8")
    assert re.findall(r"Round #(\d+)", check) == [str(r) for r in range(1, plan["rounds"] + 1)]
    assert "Checker pairings" not in check



def _kept(games: Iterable[Game]) -> list[tuple[object, ...]]:
    """What a game says, whatever its board: round, players, result, forfeit, bye."""
    return sorted((g.pairing.round, g.pairing.white, g.pairing.black or "",
                   g.result.value if g.result else "", g.forfeit,
                   g.bye.value if g.pairing.is_bye else "") for g in games)
