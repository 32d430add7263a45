"""A TRF event with forfeits or given byes is refused by the hub's ledger, which cannot
keep them yet, rather than stored as games played and full points."""

from __future__ import annotations

from pathlib import Path

import pytest

from arbiter.hub.ledger import Ledger
from arbiter.tournament.errors import PairingError
from arbiter.tournament.trf import import_trf

GOLDEN = Path(__file__).parents[1] / "tournament" / "golden"


def test_forfeits_and_given_byes_are_refused_and_nothing_is_stored(tmp_path: Path) -> None:
    text = next((GOLDEN / "trf").glob("gen-020p-*.trf")).read_bytes().decode()
    event = import_trf(text)
    with Ledger(tmp_path / "event.sqlite", "open") as ledger:
        with pytest.raises(PairingError, match="forfeit or a bye the hub cannot keep"):
            ledger.admin.import_event(event.players, event.games, event.total_rounds)
        assert ledger.admin.players() == [] and ledger.admin.rounds() == []


def test_an_event_of_games_and_pairing_byes_still_imports(tmp_path: Path) -> None:
    event = import_trf((GOLDEN / "dutch-009p-5r-seed3.trf").read_text(encoding="utf-8"))
    with Ledger(tmp_path / "event.sqlite", "open") as ledger:
        ledger.admin.import_event(event.players, event.games, event.total_rounds)
        assert len(ledger.admin.rounds()) == 5
