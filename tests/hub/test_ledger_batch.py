"""The ledger's group commit (``ledger.store.batch``) and its read-only connection for readers."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from arbiter.hub.ledger import Ledger
from tests.support.contract import challenge, new_game


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    with Ledger(tmp_path / "event.sqlite", "open-2026") as led:
        yield led


def _on_disk(ledger: Ledger, table: str) -> list[int]:
    """The seqs another connection (another process, a restarted hub) sees for ``table``."""
    with sqlite3.connect(ledger.path) as other:
        return [s for (s,) in other.execute(
            "SELECT seq FROM events WHERE table_name=? ORDER BY seq", (table,))]


def _refuse_table(ledger: Ledger, table: str, how: str) -> None:
    """Make SQLite itself fail every event insert of ``table`` (ABORT: that statement;
    ROLLBACK: the whole transaction), as a failing disk or a broken row would."""
    ledger.store._db.execute(
        f"CREATE TRIGGER refuse_{table} BEFORE INSERT ON events WHEN NEW.table_name='{table}'"
        f" BEGIN SELECT RAISE({how}, 'refused'); END"
    )


def test_batch_writes_every_event_in_one_transaction(ledger: Ledger) -> None:
    statements: list[str] = []
    ledger.store._db.set_trace_callback(statements.append)
    try:
        with ledger.store.batch():
            assert ledger.events.record("T1", new_game("T1", 1, "g1"))
            assert ledger.events.record("T1", challenge("T1", 2, "g1", 1, 1, 0))
            assert ledger.events.record("T2", new_game("T2", 1, "g1"))
            assert _on_disk(ledger, "T1") == []  # nothing claimed before the commit
            assert ledger.events.last_seq("T1") == 2  # the writer's own reads see its batch
    finally:
        ledger.store._db.set_trace_callback(None)
    assert statements.count("BEGIN IMMEDIATE") == 1
    assert statements.count("COMMIT") == 1
    assert _on_disk(ledger, "T1") == [1, 2]
    assert _on_disk(ledger, "T2") == [1]
    assert ledger.events.games("T1")[0].challenges == 1


def test_batch_undoes_a_failed_write_alone(ledger: Ledger) -> None:
    _refuse_table(ledger, "BAD", "ABORT")
    with ledger.store.batch():
        assert ledger.events.record("T1", new_game("T1", 1, "g1"))
        with pytest.raises(sqlite3.IntegrityError):
            ledger.events.record("BAD", new_game("BAD", 1, "g1"))
        assert ledger.events.record("T1", challenge("T1", 2, "g1", 1, 1, 0))
    assert _on_disk(ledger, "T1") == [1, 2]
    assert _on_disk(ledger, "BAD") == []
    assert ledger.tables.names() == ["T1"]  # BAD's row went with its event


def test_batch_that_sqlite_rolled_back_commits_nothing(ledger: Ledger) -> None:
    _refuse_table(ledger, "BAD", "ROLLBACK")
    with pytest.raises(sqlite3.Error), ledger.store.batch():
        assert ledger.events.record("T1", new_game("T1", 1, "g1"))
        with pytest.raises(sqlite3.IntegrityError):
            ledger.events.record("BAD", new_game("BAD", 1, "g1"))
        # The rest of the batch must not be committed on its own, without T1's event.
        ledger.events.record("T2", new_game("T2", 1, "g1"))
    assert _on_disk(ledger, "T1") == []
    assert _on_disk(ledger, "T2") == []
    ledger.events.record("T3", new_game("T3", 1, "g1"))  # the ledger carries on
    assert _on_disk(ledger, "T3") == [1]


def test_batch_of_retained_flags_fsyncs_once_a_durable_write_joins(ledger: Ledger) -> None:
    statements: list[str] = []
    ledger.store._db.set_trace_callback(statements.append)
    try:
        with ledger.store.batch(durable=False):
            ledger.tables.set_status("T1", {"format": 1, "table": "T1", "state": "idle"})
            ledger.events.note_rejection("T1", None, "online payload 'maybe'")
    finally:
        ledger.store._db.set_trace_callback(None)
    # The flags are committed without an fsync; the rejection goes on in a FULL one.
    assert statements[0] == "PRAGMA synchronous=NORMAL"
    upgrade = statements.index("PRAGMA synchronous=FULL")
    assert statements[upgrade - 1] == "COMMIT"
    assert statements[upgrade + 1] == "BEGIN IMMEDIATE"
    assert statements[-1] == "COMMIT"
    assert ledger.store._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert [r[3] for r in ledger.events.rejections()] == ["online payload 'maybe'"]


def test_readers_do_not_wait_for_a_writer_mid_transaction(ledger: Ledger) -> None:
    ledger.events.record("T1", new_game("T1", 1, "g1"))
    inside, release = threading.Event(), threading.Event()

    def writer() -> None:
        with ledger.store.batch():
            ledger.events.record("T1", challenge("T1", 2, "g1", 1, 1, 0))
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert inside.wait(10)
        seen: list[int] = []
        reader = threading.Thread(target=lambda: seen.append(ledger.events.last_seq("T1")))
        reader.start()
        reader.join(10)
        # With one connection and one lock the reader would wait for the writer.
        assert not reader.is_alive()
        assert seen == [1]  # the last commit, not the writer's open transaction
    finally:
        release.set()
        thread.join(10)
    assert ledger.events.last_seq("T1") == 2
