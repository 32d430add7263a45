"""kill -9 of a process writing the ledger: nothing acknowledged is lost, nothing half-made.

A child (tests/hub/ledger_child.py) records table events and prints an
acknowledgement after each; it is killed with SIGKILL at a random point,
again and again, each new child carrying on from what the ledger holds.
After each kill the ledger must open, pass SQLite's integrity check, hold
every acknowledged event exactly as sent with no gap, and have games and
results that match a fresh derivation from its events.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
from pathlib import Path

from arbiter.hub.ledger import Ledger
from arbiter.tournament.model import Colour, Result
from tests.hub.ledger_child import EVENT, PER_GAME, TABLES, boards, event_for
from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("ledger_child.py")
KILLS = 8


def _run_and_kill(path: Path, seed: int, acks_wanted: int) -> list[tuple[str, int]]:
    """Start a child, let it acknowledge ``acks_wanted`` events, SIGKILL it; its acks."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, str(CHILD), str(path), str(seed)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    acks: list[tuple[str, int]] = []

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            parts = line.split()
            if parts[:1] == ["ack"] and len(parts) == 3:
                acks.append((parts[1], int(parts[2])))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        wait_until(lambda: len(acks) >= acks_wanted or proc.poll() is not None, timeout=60)
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
    finally:
        proc.kill()
        proc.wait(timeout=10)
        reader.join(timeout=10)
    return list(acks)


def test_ledger_kill_9_loses_nothing_acknowledged(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite"
    rng = random.Random(20261123)
    acknowledged: dict[str, int] = {t: 0 for t in TABLES}
    for kill in range(KILLS):
        for table, seq in _run_and_kill(path, kill, rng.randint(5, 60)):
            acknowledged[table] = max(acknowledged[table], seq)
        with Ledger(path, EVENT) as ledger:
            assert ledger.archive.verify() == []
            where = boards(ledger)
            for table in TABLES:
                held = ledger.events.of_table(table)
                assert len(held) >= acknowledged[table], f"{table}: an acknowledged event lost"
                assert held == [event_for(where, table, s) for s in range(1, len(held) + 1)]
                assert ledger.events.gaps(table) == []
            # The first game at each table is its assigned board: scored once it is over.
            for row in ledger.admin.pairings(1):
                assert row.table is not None
                over = ledger.events.last_seq(row.table) >= PER_GAME
                assert (row.result is not None) == over
                if over:
                    winner = event_for(where, row.table, PER_GAME)["ending"]["winner"]
                    expected = Result.from_winner(None if winner is None else Colour(winner))
                    assert row.result is expected
    assert sum(acknowledged.values()) >= KILLS * 5
