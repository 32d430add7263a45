"""A venue rehearsed on one machine: a broker, the hub and N simulated tables, playing.

What an organiser does at a real venue, with the same commands: ``broker-config``
writes the locked-down broker (a login per table and one for the hub), Debian's
Mosquitto runs it, ``hub set-pin`` and ``hub`` serve the event, and each table is
``join`` (its ``table-N.toml``) then ``run --sim``, with a config and data directory
of its own and a web port of its own. A player thread then runs the event through
the organiser's API (players, each round paired and sent to the tables) and plays
every board at its table through the simulator's API as the players would (NEW GAME
once the assignment shows, challenges, then a flag captured or a draw agreed).

Everything is a child process of the rehearsal, under one directory; :meth:`stop`
ends them all (SIGTERM, then SIGKILL after a wait).
"""

from __future__ import annotations

import json
import logging
import os
import random
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from arbiter.threads import BackgroundThread, declare
from arbiter.venue.errors import RehearsalError
from arbiter.venue.ports import free_port

log = logging.getLogger(__name__)

PLAYER = declare("venue rehearsal", __name__,
                 "plays a rehearsed venue's rounds through the hub's and the tables' APIs")
BOARD = declare("venue rehearsal board", __name__,
                "plays one board's game of a rehearsed round at its sim table")

#: Seconds a process is given to come up (a table's start on a busy machine included).
READY_SECONDS = 120.0
#: Seconds a child is given to end on SIGTERM before SIGKILL.
STOP_SECONDS = 10.0
#: The sim tables' config besides ``join``'s section: short tunes and no spoken phrase,
#: so that a rehearsed game takes seconds.
TABLE_CONFIG = """[signals]
battle_phrase = false

[tunes]
taps = "Taps:d=16,o=5,b=200:g4,c,e"
ready = "Ready:d=32,o=5,b=200:c"
error = "Error:d=32,o=4,b=200:c"
fault = "Fault:d=32,o=4,b=200:c"

[web]
admin_pin = "{pin}"
"""
#: Challenges that end no game (attacker, defender), after the opening spy-takes-general.
MIDDLE = (("B:PVT", "W:SPY"), ("W:PVT", "B:PVT"), ("B:MAJ", "W:CPT"), ("W:2*G", "B:COL"),
          ("B:SPY", "W:4*G"))
#: A result by the winner (None: a draw agreed).
RESULTS = {"W": "1-0", "B": "0-1", None: "1/2-1/2"}


@dataclass(frozen=True)
class Plan:
    """What to rehearse: ``tables`` tables, ``players`` players, ``rounds`` Swiss rounds."""

    tables: int
    players: int
    rounds: int
    event: str = "rehearsal"
    hub_port: int = 8088
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.tables < 1 or self.players < 2 or self.rounds < 1:
            raise RehearsalError("a rehearsal needs a table, two players and a round")
        if self.players > 2 * self.tables:  # a board without a table would wait forever
            raise RehearsalError(f"{self.players} players need {-(-self.players // 2)} tables,"
                                 f" not {self.tables}")
        if not 0 < self.hub_port < 65536:
            raise RehearsalError(f"the hub's port {self.hub_port} is not one to open a page on")


def gg_arbiter() -> list[str]:
    """The argv prefix that runs this interpreter's ``gg-arbiter``."""
    exe = shutil.which("gg-arbiter", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "arbiter.app.cli"]


def http(port: int, method: str, path: str, body: Any = None, pin: str | None = None,
         timeout: float = 30.0) -> Any:
    """One JSON request to 127.0.0.1:``port``; the answer's JSON.

    :raises RehearsalError: a status of 300 or more (with the answer).
    """
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"} if data is not None else {}
    if pin is not None:
        headers["X-Admin-PIN"] = pin
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data, headers,
                                     method=method)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as r:
            return json.loads(r.read() or b"null")
    except urllib.error.HTTPError as exc:
        raise RehearsalError(f"{method} {path}: {exc.code} {exc.read()[:300]!r}") from None


def _listening(port: int) -> Callable[[], bool]:
    def test() -> bool:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    return test


def _answers(port: int, path: str) -> Callable[[], bool]:
    return lambda: bool(http(port, "GET", path))


class Rehearsal:
    """The processes of a rehearsed venue under ``work``, and the thread that plays it.

    ``say`` gets each line for the organiser (where to look, each round played).
    """

    def __init__(self, plan: Plan, work: Path, say: Callable[[str], None]) -> None:
        self.plan, self.work, self.say = plan, work, say
        self.pin = f"{secrets.randbelow(10**6):06d}"
        self.rng = random.Random(plan.seed)
        self._procs: list[tuple[str, subprocess.Popen[bytes], IO[bytes]]] = []
        self._lock = threading.Lock()  # the processes' list, between start and stop
        self._stopped = False
        self.table_ports: dict[str, int] = {}
        self.broker_port = 0
        self.player: BackgroundThread | None = None
        self.played = threading.Event()  # every round played
        self.failed: str | None = None

    # --- the processes ---------------------------------------------------------------

    def _run(self, *args: str) -> None:
        done = subprocess.run([*gg_arbiter(), *args], capture_output=True, text=True,
                              timeout=120, check=False)
        if done.returncode != 0:
            raise RehearsalError(f"gg-arbiter {' '.join(args[:2])} failed: "
                                 f"{(done.stderr or done.stdout).strip()[-400:]}")

    def _spawn(self, name: str, argv: Sequence[str]) -> None:
        logs = self.work / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        with self._lock:  # a stop while the venue starts: nothing more is started
            if self._stopped:
                raise RehearsalError("stopped while starting")
            out = (logs / f"{name}.log").open("ab")
            # A session of its own: the terminal's Ctrl-C reaches the rehearsal alone,
            # which then stops each child in order.
            proc = subprocess.Popen(list(argv), stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
            self._procs.append((name, proc, out))

    def _ready(self, name: str, test: Callable[[], bool], stopping: threading.Event) -> None:
        deadline = time.monotonic() + READY_SECONDS
        with self._lock:
            proc = next((p for n, p, _o in self._procs if n == name), None)
        if proc is None:
            raise RehearsalError(f"stopped while {name} started")
        while not stopping.is_set():
            if proc.poll() is not None:
                raise RehearsalError(f"{name} ended with status {proc.returncode}: see "
                                     f"{self.work / 'logs' / (name + '.log')}")
            try:
                if test():
                    return
            except (OSError, RehearsalError):
                pass  # not listening yet
            if time.monotonic() > deadline:
                raise RehearsalError(f"{name} not ready in {READY_SECONDS:g} s")
            stopping.wait(0.2)
        raise RehearsalError(f"stopped while {name} started")

    def start(self, stopping: threading.Event) -> None:
        """Write the venue's files, start the broker, the hub and the tables (ready)."""
        plan = self.plan
        mosquitto = shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin")
        if mosquitto is None:
            raise RehearsalError("no mosquitto: sudo apt install mosquitto")
        venue = self.work / "venue"
        if venue.exists():
            raise RehearsalError(f"{self.work} holds a rehearsal already: give another --dir")
        self.broker_port = free_port()
        self._run("broker-config", "--tables", str(plan.tables), "--event", plan.event,
                  "--out", str(venue), "--listen", "127.0.0.1", "--listen-port",
                  str(self.broker_port), "--host", "127.0.0.1")
        if os.geteuid() == 0:
            # Started as root, Mosquitto drops to the "mosquitto" user, which cannot reach
            # a directory under a private one (a root's temporary directory): on loopback
            # for a rehearsal it may stay root.
            with (venue / "mosquitto.conf").open("a", encoding="utf-8") as conf:
                conf.write("\n# venue rehearse, started as root: the files are root's\nuser root\n")
        self._spawn("broker", [mosquitto, "-c", str(venue / "mosquitto.conf")])
        # The broker first: the hub would wait and retry for it, but the tables joined
        # below would log a refused connection each until it listens.
        self._ready("broker", _listening(self.broker_port), stopping)
        hub_data = self.work / "hub"
        self._run("hub", "--event", plan.event, "--data", str(hub_data), "set-pin", self.pin)
        self._spawn("hub", [*gg_arbiter(), "hub", "--event", plan.event, "--data",
                            str(hub_data), "--broker", f"mqtt://hub@127.0.0.1:{self.broker_port}",
                            "--password-file", str(venue / "secrets" / "hub.password"),
                            "--host", "127.0.0.1", "--port", str(plan.hub_port)])
        for i in range(1, plan.tables + 1):
            name = str(i)
            home = self.work / "tables" / name
            home.mkdir(parents=True)
            config = home / "config.toml"
            config.write_text(TABLE_CONFIG.format(pin=self.pin), encoding="utf-8")
            self._run("join", "--config", str(config), "--data", str(home / "data"),
                      str(venue / "tables" / f"table-{i}.toml"))
            port = self.table_ports[name] = free_port()
            self._spawn(f"table-{name}", [*gg_arbiter(), "run", "--sim", "--config",
                                          str(config), "--data", str(home / "data"),
                                          "--host", "127.0.0.1", "--port", str(port)])
        self._ready("hub", lambda: bool(http(plan.hub_port, "GET", "/api/venue") is not None),
                    stopping)
        for name, port in self.table_ports.items():
            self._ready(f"table-{name}", _answers(port, "/api/status"), stopping)

        def all_online() -> bool:
            rows = http(plan.hub_port, "GET", "/api/venue")["tables"]
            return len(rows) == plan.tables and all(r["online"] is True for r in rows)

        self._ready("hub", all_online, stopping)

    def stop(self) -> None:
        """End every child: the tables, then the hub, then the broker (each SIGTERM, then
        SIGKILL after :data:`STOP_SECONDS`)."""
        if self.player is not None:
            self.player.stopping.set()  # no new move; one in flight fails fast below
        with self._lock:
            self._stopped = True
            procs = list(reversed(self._procs))
            self._procs.clear()
        for _name, proc, _out in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for name, proc, out in procs:
            try:
                proc.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                log.warning("%s did not stop on SIGTERM: killed", name)
                proc.kill()
                proc.wait()
            out.close()
        if self.player is not None:
            self.player.stop(STOP_SECONDS)

    # --- the play ----------------------------------------------------------------------

    def play(self) -> BackgroundThread:
        """Start the thread that plays the event (:attr:`played` set once it has)."""
        self.player = BackgroundThread(self._play, PLAYER)
        self.player.start()
        return self.player

    def _play(self, stopping: threading.Event) -> None:
        try:
            self._event(stopping)
        except RehearsalError as exc:
            if not stopping.is_set():
                self.failed = str(exc)
                self.say(f"rehearsal: {exc}")

    def _event(self, stopping: threading.Event) -> None:
        plan, hub = self.plan, self.plan.hub_port
        names = [f"Player {i:02d}" for i in range(1, plan.players + 1)]
        http(hub, "POST", "/api/organiser/players/import",
             {"csv": "name,rating\n" + "".join(f"{p},{2000 - 5 * i}\n"
                                               for i, p in enumerate(names))}, pin=self.pin)
        for number in range(1, plan.rounds + 1):
            if stopping.is_set():
                return
            http(hub, "POST", "/api/organiser/rounds", {"system": "swiss"}, pin=self.pin)
            http(hub, "POST", "/api/organiser/assign/round", {"round": number}, pin=self.pin)
            boards = [b for b in http(hub, "GET", "/api/rounds")[-1]["boards"] if not b["bye"]]
            games = [_Board(self, b, number) for b in boards if b["table"] in self.table_ports]
            # The boards at once, as at a venue; each waits on the player's ``stopping``.
            threads = [BackgroundThread(g.player(stopping), BOARD, label=g.board["table"])
                       for g in games]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            failed = [g.failed for g in games if g.failed]
            if failed:
                raise RehearsalError(failed[0])
            if stopping.is_set():
                return

            def results_in(n: int = number) -> bool:
                return all(b["result"] for b in http(hub, "GET", "/api/rounds")[n - 1]["boards"]
                           if not b["bye"])  # a bye has no game, and no result to wait for

            self._wait(results_in, stopping, f"round {number}'s results on the hub")
            self.say(f"round {number} played: {len(games)} game{'s' * (len(games) != 1)},"
                     " every result on the hub")
        self.played.set()

    def _wait(self, test: Callable[[], bool], stopping: threading.Event, what: str) -> None:
        """Until ``test()``; :raises RehearsalError: timed out, or stopped (nothing
        after the wait is done then, nor said)."""
        deadline = time.monotonic() + READY_SECONDS
        while not stopping.is_set():
            if test():
                return
            if time.monotonic() > deadline:
                raise RehearsalError(f"timed out waiting for {what}")
            stopping.wait(0.1)
        raise RehearsalError(f"stopped waiting for {what}")


class _Board:
    """One board's game at its table, played through the simulator's API."""

    def __init__(self, rehearsal: Rehearsal, board: dict[str, Any], number: int) -> None:
        self.r, self.board, self.number = rehearsal, board, number
        self.port = rehearsal.table_ports[board["table"]]
        self.winner = rehearsal.rng.choice(("W", "B", None))
        self.middle = MIDDLE[:rehearsal.rng.randrange(len(MIDDLE) + 1)]
        self.failed: str | None = None

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        return http(self.port, method, path, body, pin=self.r.pin)

    def status(self) -> dict[str, Any]:
        return dict(self._call("GET", "/api/status"))

    def player(self, stopping: threading.Event) -> Callable[[threading.Event], None]:
        """The board thread's target: it plays until the rehearsal's ``stopping``."""
        return lambda _own: self.play(stopping)

    def play(self, stopping: threading.Event) -> None:
        try:
            self._play(stopping)
        except (RehearsalError, OSError) as exc:
            self.failed = f"table {self.board['table']}: {exc}"

    def _play(self, stopping: threading.Event) -> None:
        wait = self.r._wait
        table = self.board["table"]

        def assigned() -> bool:
            a = self.status().get("assignment") or {}
            return (a.get("round"), a.get("board")) == (self.number, self.board["board"])

        wait(assigned, stopping, f"table {table}'s assignment")
        game = int(self._call("POST", "/api/games", {})["game_id"])
        wait(lambda: self.status()["state"] == "idle", stopping, f"table {table} ready")
        for attacker, defender in (("W:SPY", "B:5*G"), *self.middle):
            self.challenge(attacker, defender, stopping)
        if self.winner is None:
            self._call("POST", f"/api/games/{game}/end", {"reason": "draw"})
        else:
            loser = "B" if self.winner == "W" else "W"
            self.challenge(f"{self.winner}:PVT", f"{loser}:FLG", stopping)

    def challenge(self, attacker: str, defender: str, stopping: threading.Event) -> None:
        """Seat both pieces, wait for the verdict, take them out again."""
        before = self.status()["challenge_count"]
        self._call("PUT", "/api/sim/slots/attacker", {"piece": attacker})
        self._call("PUT", "/api/sim/slots/defender", {"piece": defender})
        self.r._wait(lambda: (self.status()["challenge_count"] > before
                              and self.status()["state"] in ("result", "game_over")),
                     stopping, f"table {self.board['table']}'s verdict")
        self._call("DELETE", "/api/sim/slots/attacker")
        self._call("DELETE", "/api/sim/slots/defender")
        self.r._wait(lambda: self.status()["state"] in ("idle", "game_over"), stopping,
                     f"table {self.board['table']} cleared")
