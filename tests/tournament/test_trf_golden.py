"""Events as bbpPairings' generator writes them (forfeits, byes, retired players, CR line
endings, no XXR): our pairing of each round is the engine's, and the engine's check finds
nothing to say of our export (golden/trf/README.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from arbiter.tournament.model import Bye, Game
from arbiter.tournament.swiss import swiss_round
from arbiter.tournament.trf import export_trf, import_trf

GOLDEN = Path(__file__).parent / "golden" / "trf"
# The generator's own files (NAME.trf), not our exports of them (NAME.export.trf,
# NAME.hub-pre.trf, NAME.hub-post.trf).
EVENTS = sorted(p for p in GOLDEN.glob("gen-*.trf") if p.name.count(".") == 1)


def _rounds(path: Path) -> int:
    """The event's length, which the generator's file does not say: in its name."""
    found = re.search(r"-(\d+)r-", path.name)
    assert found is not None
    return int(found.group(1))


def _given_ahead(g: Game) -> bool:
    return g.pairing.is_bye and g.bye is not Bye.PAIRING


def test_there_are_generated_events_with_every_kind_of_round() -> None:
    assert len(EVENTS) >= 5
    codes = set()
    for path in EVENTS:
        text = path.read_bytes().decode()
        assert "\r" in text and "\n" not in text and "XXR" not in text
        codes |= set(re.findall(r" [wb-] ([+\-UHZ])", text))
    assert codes >= {"+", "-", "U", "H", "Z"}


@pytest.mark.parametrize("path", EVENTS, ids=[p.stem for p in EVENTS])
def test_every_round_is_the_engines(path: Path) -> None:
    event = import_trf(path.read_bytes().decode())
    total = _rounds(path)
    played = max(g.pairing.round for g in event.games)
    assert played == total
    for number in range(1, played + 1):
        # Before the pairing: the rounds so far and the byes given for this one.
        before = [
            g for g in event.games
            if g.pairing.round < number or (g.pairing.round == number and _given_ahead(g))
        ]
        theirs = {
            (g.pairing.white, g.pairing.black)
            for g in event.games
            if g.pairing.round == number and not _given_ahead(g)
        }
        ours = swiss_round(event.players, before, number, total, event.initial)
        assert {(p.white, p.black) for p in ours} == theirs, f"{path.name} round {number}"


@pytest.mark.parametrize("path", EVENTS, ids=[p.stem for p in EVENTS])
def test_the_export_is_the_one_the_engine_checked_clean(path: Path) -> None:
    event = import_trf(path.read_bytes().decode())
    ours = export_trf(event.name, event.players, event.games, _rounds(path), event.initial)
    assert ours == path.with_suffix(".export.trf").read_text(encoding="utf-8")
    check = path.with_suffix(".check.txt").read_text(encoding="utf-8")
    assert re.findall(r"Round #(\d+)", check) == [str(r) for r in range(1, _rounds(path) + 1)]
    assert "Checker pairings" not in check
    # And it reads back as the same event.
    again = import_trf(ours)
    assert again.players == event.players
    assert again.games == event.games
    assert again.total_rounds == _rounds(path)


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
def test_any_line_ending_reads_the_same(ending: str) -> None:
    text = EVENTS[0].read_bytes().decode()
    lines = re.split(r"\r\n|\r|\n", text)
    assert import_trf(ending.join(lines)) == import_trf(text)
