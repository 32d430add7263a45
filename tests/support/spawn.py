"""Running the `gg-arbiter` command line as a child process."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from arbiter.venue import ports
from tests.support.waiting import WAIT


def _worker_pool() -> ports.PortPool:
    """This pytest-xdist worker's share of the ports (the whole range without xdist), so two
    workers never pick the same port for listeners their children bind later."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    index = int(worker[2:]) if worker.startswith("gw") and worker[2:].isdigit() else 0
    return ports.PortPool(index, count) if index < count else ports.PortPool()


ports.use(_worker_pool())  # a rehearsal run in this process draws from the same share


def free_port() -> int:
    """A TCP port of 127.0.0.1, free now and never handed out before by this worker."""
    return ports.free_port()


def gg_arbiter() -> list[str]:
    """The argv prefix that runs this checkout's `gg-arbiter`."""
    exe = shutil.which("gg-arbiter", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "arbiter.app.cli"]


class Session:
    """`gg-arbiter ARGS` with a pipe to its standard input and its output read on a
    thread, so a test can send a line once the output shows the state it needs."""

    def __init__(self, args: Sequence[str], env: Mapping[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [*gg_arbiter(), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=None if env is None else dict(env),
        )
        self.lines: list[str] = []
        self._cond = threading.Condition()
        self._eof = False
        self._reader = threading.Thread(target=self._read, name="gg-arbiter output", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._cond:
                self.lines.append(line.rstrip("\n"))
                self._cond.notify_all()
        with self._cond:
            self._eof = True
            self._cond.notify_all()

    def send(self, *lines: str) -> None:
        """Type ``lines`` on the child's standard input."""
        assert self.proc.stdin is not None
        self.proc.stdin.write("".join(line + "\n" for line in lines))
        self.proc.stdin.flush()

    def expect(self, text: str, after: int = 0, timeout: float = 3 * WAIT) -> int:
        """Wait for an output line (from index ``after`` on) containing ``text``; its index.

        :raises AssertionError: with the output so far, if the child ended or
            ``timeout`` s passed first.
        """

        def find() -> int | None:
            for i in range(after, len(self.lines)):
                if text in self.lines[i]:
                    return i
            return None

        with self._cond:
            self._cond.wait_for(lambda: find() is not None or self._eof, timeout)
            found = find()
            assert found is not None, f"no {text!r} in the output:\n" + "\n".join(self.lines)
            return found

    def finish(self, timeout: float = 3 * WAIT) -> tuple[int, str]:
        """Close standard input, wait for the exit; (return code, whole output)."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=timeout)
        self._reader.join(timeout=timeout)
        with self._cond:
            return code, "\n".join(self.lines) + "\n"

    def kill(self) -> None:
        """End the child if it still runs (for cleanup after a failed test)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=WAIT)
