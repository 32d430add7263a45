"""Power cuts, not only kill -9 (issue 8, item 8): every crash state a power cut
could leave while challenges are accepted, NEW GAME starts and a game is resigned
(and tags are enrolled) recovers with nothing acknowledged lost and nothing half-made (see
:mod:`tests.support.crash` for how the states are built and bounded)."""

from __future__ import annotations

import logging

import pytest

from tests.support.crash import explore
from tests.support.tools import require_tool

# Enrollments, challenges, NEW GAME over an open game, a resignation, NEW GAME over a
# finished one.
PLAN = "ttcccnccrnctccnc"

require_tool("strace")  # fails the run under CI, else skips this module


@pytest.fixture(autouse=True)
def _quiet_recovery_logs(caplog: pytest.LogCaptureFixture) -> None:
    # Each recovered state logs what it repaired; thousands of lines help nobody.
    caplog.set_level(logging.CRITICAL, logger="arbiter.storage")


@pytest.mark.timeout(120)
def test_every_crash_state_recovers_with_nothing_acknowledged_lost() -> None:
    report = explore(PLAN, seed=8)
    assert report.failures == [], f"{report}:\n" + "\n".join(report.failures[:20])
    # It really explored: every call of the plan is a cut, most with several states.
    assert report.cuts > 50
    assert report.states > 80


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("mutation", "symptom"),
    [
        ("append", "lost an acknowledged challenge"),
        ("rewrite", "acknowledged game"),
        ("registry", "tag registry does not open"),
    ],
)
def test_the_explorer_catches_a_missing_fsync(mutation: str, symptom: str) -> None:
    # The same plan with one fsync removed from the journal's or the registry's source.
    report = explore(PLAN, seed=8, mutation=mutation)
    assert report.failures, f"no crash state failed without the fsync in {mutation}: {report}"
    assert any(symptom in f for f in report.failures), "\n".join(report.failures[:20])


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("mutation", "walk"), [("order", "past-open")])
def test_the_explorer_catches_an_ending_published_out_of_order(mutation: str, walk: str) -> None:
    # Issue 19: NEW GAME made the new journal before it ended the old game, and the
    # outbox walked on past a game still open; a reader between the two writes numbered
    # game 2's events before game 1's ending. With both put back, the explorer must see it.
    report = explore(PLAN, seed=8, mutation=mutation, walk=walk, stop_after=5)
    assert any("renumbered" in f or "recovery" in f for f in report.failures), report


@pytest.mark.timeout(120)
@pytest.mark.parametrize("half", ["journal", "outbox"])
def test_the_explorer_passes_with_either_half_of_the_fix(half: str) -> None:
    # Each half alone keeps the outbox's numbers: the journal's order (no reader sees a
    # new game before the old one's end) and the outbox's walk (it stops at an open game).
    mutation, walk = ("", "past-open") if half == "journal" else ("order", "outbox")
    report = explore(PLAN, seed=8, mutation=mutation, walk=walk)
    assert report.failures == [], f"{report}:\n" + "\n".join(report.failures[:20])
