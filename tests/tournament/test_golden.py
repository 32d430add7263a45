"""Our Dutch pairings against the FIDE-endorsed engine's, round by round (golden/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arbiter.tournament.errors import NoLegalPairingError
from arbiter.tournament.model import Pairing
from arbiter.tournament.swiss import swiss_round
from arbiter.tournament.trf import export_trf, import_trf

GOLDEN = sorted((Path(__file__).parent / "golden").glob("*.trf"))


def _as_played(pairings: list[Pairing]) -> set[tuple[str, str | None]]:
    return {(p.white, p.black) for p in pairings}


def test_there_are_golden_files() -> None:
    assert len(GOLDEN) >= 10


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_every_round_is_the_engines(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    event = import_trf(text)
    games = list(event.games)
    played = max(g.pairing.round for g in games)
    for number in range(1, played + 1):
        before = [g for g in games if g.pairing.round < number]
        theirs = [g.pairing for g in games if g.pairing.round == number]
        ours = swiss_round(event.players, before, number, event.total_rounds)
        assert _as_played(ours) == _as_played(theirs), f"{path.name} round {number}"
    if played < event.total_rounds:
        # The engine found no legal pairing for the next round: neither may we.
        with pytest.raises(NoLegalPairingError):
            swiss_round(event.players, games, played + 1, event.total_rounds)


@pytest.mark.parametrize("path", GOLDEN, ids=[p.stem for p in GOLDEN])
def test_trf_round_trip_is_byte_identical(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    event = import_trf(text)
    assert export_trf(event.name, event.players, event.games, event.total_rounds) == text
