"""A burst of stop signals ends `gg-arbiter run` promptly (issue 8, item 1)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.support.rig import write_config
from tests.support.spawn import Session

#: Runs per test: the old handler hung in 3 to 7 runs of 30 here (7 of 12 in the issue).
RUNS = 30
#: Seconds a run may take to exit once the burst is sent.
EXIT_WITHIN = 5.0


def _burst(pid: int, count: int = 20) -> None:
    """Send ``count`` SIGTERM and SIGINT back to back, alternating."""
    for i in range(count):
        try:
            os.kill(pid, signal.SIGTERM if i % 2 == 0 else signal.SIGINT)
        except ProcessLookupError:
            return  # it has already exited: the burst did its job


@pytest.mark.timeout(300)
def test_a_burst_of_stop_signals_always_ends_the_run(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    config.write_text(config.read_text().replace('kind = "keys-gpio"', 'kind = "sim"'))
    hung: list[str] = []
    codes: list[int] = []
    for run_number in range(RUNS):
        data = tmp_path / f"data{run_number}"
        run = Session(["run", "--config", str(config), "--data", str(data),
                       "--host", "127.0.0.1", "--port", "0"])
        try:
            # The console's prompt comes once the stop handlers are in place.
            run.expect("simulator: type 'help'")
            _burst(run.proc.pid)
            try:
                code = run.proc.wait(timeout=EXIT_WITHIN)
            except subprocess.TimeoutExpired:
                hung.append(f"run {run_number}:\n" + "\n".join(run.lines))
            else:
                codes.append(code)
        finally:
            run.kill()
    assert not hung, f"{len(hung)} of {RUNS} runs hung after the burst:\n" + "\n".join(hung)
    assert codes == [0] * RUNS, codes  # a clean stop, not killed by a signal
