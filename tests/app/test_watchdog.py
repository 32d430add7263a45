"""The watchdog is fed only while the device's worker makes progress (issue 8, item 2)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from arbiter.app.assembly import build_arbiter
from arbiter.app.config import load_config
from arbiter.app.watchdog import Watchdog
from arbiter.device.arbiter import COMMAND_TIMEOUT
from tests.support.clock import FakeClock
from tests.support.rig import write_config
from tests.support.waiting import WAIT, wait_until

#: Real seconds between the watchdog's checks: short, the fake clock does the waiting.
CHECK_EVERY = 0.01


@pytest.mark.timeout(60)
@pytest.mark.slow  # seconds of real time (tests/support/kinds.py)
def test_a_stuck_worker_stops_the_watchdog_until_it_moves_again(tmp_path: Path) -> None:
    clock = FakeClock()
    config = load_config(write_config(tmp_path))
    arbiter = build_arbiter(config, data_dir=tmp_path / "data", sim=True, clock=clock)
    sent: list[str] = []
    checks: list[bool] = []

    def healthy() -> bool:
        answer = arbiter.is_healthy()
        checks.append(answer)
        return answer

    def fed_after(mark: int) -> bool:
        return "WATCHDOG=1" in sent[mark:]

    def starved_for(checks_seen: int) -> int:
        """Wait for a failed check, then ``checks_seen`` more; the feeds up to that failure."""
        first = len(checks)
        wait_until(lambda: False in checks[first:])
        mark = len(sent)  # every feed of an earlier check is sent by now
        seen = len(checks)
        wait_until(lambda: len(checks) >= seen + checks_seen)
        return mark

    stop = threading.Event()
    gate = threading.Event()
    started = threading.Event()
    blocked = threading.Thread(target=lambda: None)
    watchdog = Watchdog(notify=sent.append, interval=CHECK_EVERY)
    arbiter.start()
    watcher = threading.Thread(target=watchdog.run, args=(healthy, stop), daemon=True)
    watcher.start()
    try:
        wait_until(lambda: fed_after(0))

        # Idle a minute: the beat goes stale until the idle worker's next turn.
        clock.advance(60)
        mark = len(sent)
        wait_until(lambda: fed_after(mark), what="an idle worker's beat")

        # A command that blocks on an event the test holds.
        def stuck() -> None:
            started.set()
            gate.wait(3 * WAIT)

        blocked = threading.Thread(target=lambda: arbiter._call(stuck), daemon=True)
        blocked.start()
        assert started.wait(WAIT)
        # A Taps's length inside a command is normal work: still fed.
        clock.advance(23)
        mark = len(sent)
        wait_until(lambda: fed_after(mark), what="feeding during a long command")

        # Past its budget the worker counts as hung: no more WATCHDOG=1.
        clock.advance(COMMAND_TIMEOUT)
        mark = starved_for(20)
        assert not fed_after(mark), "fed while the worker was stuck"

        # Unstuck, it is fed again.
        gate.set()
        wait_until(lambda: fed_after(mark), what="feeding after the worker moved on")
    finally:
        gate.set()
        stop.set()
        watcher.join(WAIT)
        blocked.join(WAIT)
        arbiter.close()


def test_no_watchdog_when_systemd_asks_for_none() -> None:
    sent: list[str] = []
    Watchdog(notify=sent.append, interval=0).run(lambda: True, threading.Event())
    assert sent == []
