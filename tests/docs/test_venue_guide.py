"""The manual's venue steps run as written (issue 26, item 8): the shell blocks of
docs/tournament/venue.md's numbered steps, executed in order against Debian's Mosquitto,
leave a broker, a hub and a table that has joined, the table online on the hub.

The convention, for any guide tested this way:

- the ```` ```sh ```` blocks before the page's first ``##`` heading are its steps; they run
  in order in one ``bash -e`` (variables carry over), in an empty directory;
- a command whose comment says "until Ctrl-C" serves in the foreground: the test starts
  it in the background, and in the end stops it as Ctrl-C does (SIGTERM, the same stop),
  expecting a clean exit;
- what belongs to the machine, not the guide, is the test's: the placeholder ``HUB``
  is 127.0.0.1, the ports 1883 and 8088 are free ones, and the table's own config and
  data (``GG_ARBITER_CONFIG``, ``GG_ARBITER_DATA``, as the appliance has them in /etc
  and /var/lib) put its web page on a free loopback port.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.spawn import free_port
from tests.support.tools import require_tool
from tests.support.waiting import wait_until

pytestmark = pytest.mark.timeout(180)

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "tournament" / "venue.md"
BACKGROUND = "until Ctrl-C"


def steps(text: str) -> list[str]:
    """The shell lines of the guide's steps, in order."""
    head = text.split("\n## ", 1)[0]
    blocks = re.findall(r"^```sh\n(.*?)^```", head, flags=re.M | re.S)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def script(lines: list[str], subs: dict[str, str]) -> str:
    """The lines as one bash script: the machine's values put in, the serving commands
    started in the background (their pids in ``pids``, their output in ``bg-N.log``)."""
    out = ["set -e", "pids=()"]
    for n, line in enumerate(lines):
        for old, new in subs.items():
            line = re.sub(rf"\b{re.escape(old)}\b", new, line)
        command, _hash, comment = line.partition("  #")
        if BACKGROUND in comment:
            out.append(f"{command.strip()} > bg-{n}.log 2>&1 &\npids+=($!)")
        else:
            out.append(line)
    # Then: say so, wait for the test's word, stop the serving commands in reverse order
    # as Ctrl-C does, and write each one's exit status.
    out += ["set +e", "touch started", "while [ ! -e stop ]; do sleep 0.1; done",
            'for ((i=${#pids[@]}-1; i>=0; i--)); do kill -TERM "${pids[i]}"; '
            'wait "${pids[i]}"; echo $? >> codes; done']
    return "\n".join(out) + "\n"


def _get(url: str) -> object:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


@pytest.fixture
def place() -> Iterator[Path]:
    # Under /tmp, reachable by the "mosquitto" user Mosquitto drops to when started as
    # root (pytest's own temporary directories are private to their owner).
    with tempfile.TemporaryDirectory(prefix="venue-guide-", dir="/tmp") as tmp:
        os.chmod(tmp, 0o755)
        yield Path(tmp)


def test_the_guide_names_its_serving_commands() -> None:
    lines = steps(GUIDE.read_text())
    assert [ln.split()[0] for ln in lines if BACKGROUND in ln] == ["mosquitto", "$H", "gg-arbiter"]
    assert any(ln.startswith("gg-arbiter join ") for ln in lines)  # the tables join
    assert any("broker-config" in ln for ln in lines)


def test_venue_guide_steps_run_as_written(place: Path) -> None:
    require_tool("mosquitto")
    broker, hub, table_web = free_port(), free_port(), free_port()
    work = place / "venue-machine"
    work.mkdir()
    table = place / "table"
    table.mkdir()
    (table / "config.toml").write_text(
        f'[web]\nhost = "127.0.0.1"\nport = {table_web}\nadmin_pin = "135790"\n')
    env = {**os.environ,
           "PATH": f"{Path(sys.executable).parent}:/usr/sbin:{os.environ.get('PATH', '')}",
           "GG_ARBITER_CONFIG": str(table / "config.toml"),
           "GG_ARBITER_DATA": str(table / "data")}
    text = script(steps(GUIDE.read_text()),
                  {"HUB": "127.0.0.1", "1883": str(broker), "8088": str(hub)})
    # A session of its own: a step that never returns (a server left in the foreground)
    # is ended with everything it started, by its process group.
    shell = subprocess.Popen(["bash", "-c", text], cwd=work, env=env, start_new_session=True,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        wait_until(lambda: (work / "started").exists() or shell.poll() is not None,
                   timeout=90, what="the guide's steps run (one never returned?)")
        assert shell.poll() is None, shell.communicate()[0]  # every step succeeded

        def table_online() -> bool:
            try:
                rows = _get(f"http://127.0.0.1:{hub}/api/venue")["tables"]  # type: ignore[index]
            except OSError:
                return False
            return [r["online"] for r in rows] == [True]

        wait_until(table_online, timeout=60, what="the joined table online on the hub")

        def table_page() -> object:  # the table's page binds beside its broker link
            try:
                return _get(f"http://127.0.0.1:{table_web}/api/status")
            except OSError:
                return None

        status = wait_until(table_page, timeout=30, what="the table's status page")
        assert isinstance(status, dict) and status["state"] == "idle"
        # The PIN the guide set is the organiser's.
        request = urllib.request.Request(f"http://127.0.0.1:{hub}/api/organiser/players",
                                         headers={"X-Admin-PIN": "246813"})
        with urllib.request.urlopen(request, timeout=10) as r:
            assert r.status == 200
    finally:
        (work / "stop").touch()
        try:
            out = shell.communicate(timeout=60)[0]
        except subprocess.TimeoutExpired:
            os.killpg(shell.pid, signal.SIGKILL)
            out = shell.communicate()[0]
        with contextlib.suppress(ProcessLookupError):  # whatever a failed step left running
            os.killpg(shell.pid, signal.SIGKILL)
    logs = {p.name: p.read_text()[-2000:] for p in work.glob("bg-*.log")}
    codes = (work / "codes").read_text().split() if (work / "codes").exists() else []
    # The table, the hub and the broker each stopped cleanly by the stop signal.
    assert codes == ["0", "0", "0"], (codes, out, logs)
