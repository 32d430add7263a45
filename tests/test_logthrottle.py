"""One throttle for every kind of bad input (issue 27, item 8): however many kinds and
senders, at most ``PER_MINUTE`` lines a minute in all."""

from __future__ import annotations

import contextlib
import logging
from pathlib import Path

import pytest

from arbiter import logthrottle
from arbiter.hub.ledger import Ledger
from arbiter.hub.tables import UNKNOWN_GAME_RECORDS
from arbiter.logthrottle import LogThrottle


def test_every_kind_of_refusal_draws_on_one_budget(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Three kinds, each of many senders: refused wire messages of 300 tables, refused
    # records past a table's bound, and another part's refusals (PINs, request bodies).
    others = LogThrottle()
    with Ledger(tmp_path / "hub.sqlite", "club") as ledger, caplog.at_level(logging.INFO):
        for n in range(300):
            ledger.events.note_rejection(f"T{n}", None, "events: not JSON")
        for n in range(UNKNOWN_GAME_RECORDS + 100):
            with contextlib.suppress(ValueError):
                ledger.tables.set_record("T1", f"g{n}", {"challenges": []})
        lines = sum(others.note(f"10.0.0.{n}") is not None for n in range(200))
    logged = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(logged) + lines == logthrottle.PER_MINUTE


def test_a_line_after_the_minute_says_what_was_held_back() -> None:
    clock = [0.0]
    budget = logthrottle.Budget(lambda: clock[0])
    taken = [budget.take() for _ in range(logthrottle.PER_MINUTE + 25)]
    assert taken.count(None) == 25 and taken[0] == 0
    clock[0] = 60.0
    assert budget.take() == 25
    assert budget.take() == 0
