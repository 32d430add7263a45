"""A burst of stop signals ends a serving `gg-arbiter hub` and `gg-arbiter run`, and the
`gg-arbiter monitor` loop, promptly, whenever it comes (issue 8, item 1; issue 24, item 2).

Each run starts the command, picks a moment (during start-up, once the command
catches SIGTERM; while serving; or while a few clients load its pages), sends 40
SIGTERM and SIGINT in a random mix back to back, and must end within
:data:`EXIT_WITHIN` seconds, with exit status 0 and no traceback. Before the hub
used the self-pipe (its signal handler called ``Event.set``), 10 of 30 hub runs
hung here; and under load 1 of 30 of each command printed a waitress traceback
(a task thread started during the shutdown wrote to the closed trigger).
GG_BURST_RUNS=30 runs 30 of each (the default, 6, keeps it near 25 s).
"""

from __future__ import annotations

import functools
import os
import random
import signal
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from tests.support.mqtt import mosquitto
from tests.support.rig import write_config
from tests.support.spawn import Session
from tests.support.waiting import wait_until

#: Runs per command; GG_BURST_RUNS=30 for the figures in the report.
RUNS = int(os.environ.get("GG_BURST_RUNS", "6"))
#: Signals in a burst: as `timeout`, systemd and an impatient Ctrl-C deliver them.
BURST = 40
#: Seconds a command may take to exit once the burst is sent.
EXIT_WITHIN = 10.0
#: The moments a burst comes at, taken in turn.
MOMENTS = ("start-up", "serving", "load")
#: Clients loading the pages in the "load" moment.
CLIENTS = 3

pytestmark = pytest.mark.timeout(600)


def _catches_sigterm(pid: int) -> bool:
    """Whether the process has its own SIGTERM disposition (the stop mechanism is set)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True  # it has ended: nothing more to wait for
    caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) & (1 << (signal.SIGTERM - 1)))


def _burst(pid: int, rng: random.Random) -> None:
    """``BURST`` signals, each SIGTERM or SIGINT at random, back to back."""
    for _ in range(BURST):
        try:
            os.kill(pid, rng.choice((signal.SIGTERM, signal.SIGINT)))
        except ProcessLookupError:
            return  # it has already exited: the burst did its job


class _Load:
    """``CLIENTS`` threads fetching ``urls`` over and over until :meth:`stop`."""

    def __init__(self, urls: list[str]) -> None:
        self._stop = threading.Event()
        self._started = threading.Barrier(CLIENTS + 1)
        self._threads = [threading.Thread(target=self._fetch, args=(urls,), daemon=True)
                         for _ in range(CLIENTS)]
        for thread in self._threads:
            thread.start()
        self._started.wait(timeout=30)  # every client has had its first answer

    def _fetch(self, urls: list[str]) -> None:
        first = True
        while not self._stop.is_set():
            for url in urls:
                try:
                    with urllib.request.urlopen(url, timeout=5) as response:
                        response.read()
                except OSError:
                    pass  # the server is going: keep asking until told to stop
            if first:
                first = False
                self._started.wait(timeout=30)

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=10)


def _one_run(session: Session, moment: str, rng: random.Random, serving_text: str,
             pages: list[str]) -> str | None:
    """Send the burst at ``moment``; None if the command ended cleanly, else what went wrong."""
    pid = session.proc.pid
    load: _Load | None = None
    if moment == "start-up":
        wait_until(lambda: _catches_sigterm(pid), what="the stop handlers")
        time.sleep(rng.uniform(0.0, 0.4))  # a random moment of the start-up, on purpose
    else:
        line = session.lines[session.expect(serving_text)]
        url = line.split(serving_text, 1)[1].split()[0]
        if moment == "load":
            load = _Load([url + page for page in pages])
    try:
        _burst(pid, rng)
        try:
            code = session.proc.wait(timeout=EXIT_WITHIN)
        except subprocess.TimeoutExpired:
            return f"hung ({moment})"
    finally:
        if load is not None:
            load.stop()
    session.finish()
    output = "\n".join(session.lines)
    if "Traceback" in output:
        return f"traceback ({moment}):\n{output}"
    if code != 0:
        return f"exit {code} ({moment}):\n{output}"
    return None


def _report(kind: str, failures: list[str]) -> str:
    hangs = sum(f.split(": ", 1)[1].startswith("hung") for f in failures)
    return f"{kind}: {len(failures)} of {RUNS} runs failed ({hangs} hung):\n" + "\n".join(failures)


def test_a_burst_of_stop_signals_always_ends_the_hub(tmp_path: Path) -> None:
    rng = random.Random(24)
    failures: list[str] = []
    with mosquitto(tmp_path / "broker") as broker:
        for run in range(RUNS):
            failure = _hub_run(tmp_path / f"hub{run}", broker, MOMENTS[run % len(MOMENTS)], rng)
            if failure:
                failures.append(f"run {run}: {failure}")
    assert not failures, _report("hub", failures)


def _hub_run(data: Path, broker: int, moment: str, rng: random.Random) -> str | None:
    session = Session(["hub", "--event", "burst", "--data", str(data),
                       "--broker", f"mqtt://127.0.0.1:{broker}", "--host", "127.0.0.1",
                       "--port", "0"])
    try:
        return _one_run(session, moment, rng, "hub web on ", ["", "api/venue"])
    finally:
        session.kill()


def test_a_burst_of_stop_signals_always_ends_the_run(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    config.write_text(config.read_text().replace('kind = "keys-gpio"', 'kind = "sim"'))
    rng = random.Random(8)
    failures: list[str] = []
    for run in range(RUNS):
        session = Session(["run", "--config", str(config), "--data", str(tmp_path / f"d{run}"),
                           "--host", "127.0.0.1", "--port", "0"])
        try:
            failure = _one_run(session, MOMENTS[run % len(MOMENTS)], rng, "Status page: ",
                               ["", "api/status"])
        finally:
            session.kill()
        if failure:
            failures.append(f"run {run}: {failure}")
    assert not failures, _report("table", failures)


def test_a_burst_of_stop_signals_ends_the_monitor_with_its_summary(tmp_path: Path) -> None:
    """`gg-arbiter monitor --sim` loops on typed commands: a burst (at a random moment of
    its start-up, or once it waits for a command) ends it as q does, summary and all."""
    config = write_config(tmp_path)
    rng = random.Random(6)
    failures: list[str] = []
    for run in range(RUNS):
        session = Session(["monitor", "--sim", "--config", str(config),
                           "--data", str(tmp_path / f"m{run}")])
        try:
            pid = session.proc.pid
            if run % 2:
                session.expect("q + Enter (or Ctrl-C) stops")
            else:
                wait_until(functools.partial(_catches_sigterm, pid), what="the stop handlers")
            _burst(pid, rng)
            try:
                session.proc.wait(timeout=EXIT_WITHIN)
            except subprocess.TimeoutExpired:
                failures.append(f"run {run}: hung")
                continue
            code, output = session.finish()  # every line read
            if code != 0 or "Traceback" in output or "switches seen closed" not in output:
                failures.append(f"run {run}: exit {code}:\n{output}")
        finally:
            session.kill()
    assert not failures, _report("monitor", failures)
