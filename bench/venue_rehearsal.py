"""A venue rehearsal with real processes: the tournament day in one command.

Run: .venv/bin/python bench/venue_rehearsal.py [--tables 40] [--rounds 3] [--viewers 50]
(an organiser's rehearsal, without the kills and the checks, is ``gg-arbiter venue
rehearse``: arbiter/venue/rehearse.py, whose games these are)

- a Mosquitto on ``gg-arbiter broker-config``'s locked-down config (one login per
  table and one for the hub, ACLs), on a free port of 127.0.0.1;
- ``gg-arbiter hub`` serving (logged in as ``hub``), and ``--tables`` ``gg-arbiter run
  --sim`` tables, each logged in as its own table;
- ``--viewers`` event streams on the hub's venue feed (gzip, decoded as a browser
  does), and an MQTT listener (the hub's login) on the event's topics;
- 2 x tables players and a Swiss event of ``--rounds`` rounds run through the
  organiser's API: each round paired and sent to the suggested tables, each board's
  game played at its table through the simulator's HTTP API (NEW GAME once the
  assignment is shown, challenges, then a flag captured or a draw agreed);
- in round 2, mid-play: a table, the hub and the broker killed with -9 and started again.

At the end it checks the hub's ledger against every table's journals (event for
event), each board's result against the game played, the points of every player
against those results, counts rank tokens in every public page, the venue stream and
the tables' public MQTT payloads, and prints the figures.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import secrets as secrets_mod
import selectors
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arbiter.hub.ledger import Ledger  # noqa: E402
from arbiter.venue.rehearse import MIDDLE  # noqa: E402  (gg-arbiter venue rehearse's games)
from bench.timing import percentile  # noqa: E402
from tests.support.hub_secrecy import leaks as rank_leaks  # noqa: E402
from tests.support.mqtt import Mosquitto, Subscriber  # noqa: E402
from tests.support.proc import cpu_seconds  # noqa: E402
from tests.support.spawn import free_port, gg_arbiter  # noqa: E402
from tests.support.sse import StreamDecoder  # noqa: E402
from tests.support.venue import BoardGame, Node, SimTable, held, hub_node, sim_table  # noqa: E402
from tests.support.web import PIN  # noqa: E402

EVENT = "rehearsal"
PUBLIC = ["/", "/screen", "/rounds", "/standings", "/games", "/api/venue", "/api/rounds",
          "/api/standings", "/api/games", "/organiser/login"]


def poll(test: Callable[[], Any], timeout: float, what: str, step: float = 0.1) -> Any:
    """``test()`` until truthy (polled every ``step`` s: 40 tables polling cost little)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = test()
        except (OSError, AssertionError):  # a node restarting
            value = None
        if value:
            return value
        if time.monotonic() > deadline:
            raise SystemExit(f"rehearsal: timed out waiting for {what}")
        time.sleep(step)


class Viewers:
    """``count`` venue streams read by one thread (gzip), reopened when the hub restarts."""

    def __init__(self, port: int, count: int) -> None:
        self.port, self.count = port, count
        self.bytes = 0
        self.text: list[bytes] = []  # every decoded body, for the rank count
        self.messages = 0
        self.reopened = 0
        self._stop = threading.Event()
        self._sel = selectors.DefaultSelector()
        for _ in range(count):
            self._open()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _open(self) -> None:
        try:
            s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        except OSError:
            return
        s.sendall(b"GET /api/events HTTP/1.1\r\nHost: hub\r\nAccept: text/event-stream\r\n"
                  b"Accept-Encoding: gzip\r\n\r\n")
        s.setblocking(False)
        self._sel.register(s, selectors.EVENT_READ, StreamDecoder())

    def _run(self) -> None:
        while not self._stop.is_set():
            for key, _ in self._sel.select(0.2):
                try:
                    chunk = key.fileobj.recv(1 << 16)  # type: ignore[union-attr]
                except BlockingIOError:
                    continue
                except OSError:
                    chunk = b""
                decoder: StreamDecoder = key.data
                if not chunk:
                    self._sel.unregister(key.fileobj)
                    key.fileobj.close()  # type: ignore[union-attr]
                    self.text.append(decoder.body)
                    continue
                self.bytes += len(chunk)
                with contextlib.suppress(ValueError, OSError):  # a stream cut by a kill
                    self.messages += len(decoder.feed(chunk))
            missing = self.count - len(self._sel.get_map())
            if missing:
                for _ in range(missing):
                    self._open()
                self.reopened += missing
                time.sleep(0.5)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        for key in list(self._sel.get_map().values()):
            self.text.append(key.data.body)
            key.fileobj.close()  # type: ignore[union-attr]


class Rehearsal:
    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        self.args, self.work = args, work
        self.rng = random.Random(args.seed)
        self.figures: list[str] = []
        self.problems: list[str] = []
        self.expected: dict[tuple[int, int], str] = {}  # (round, board): result played
        self.pages = 0
        self.leaks: list[str] = []

    # --- set-up ------------------------------------------------------------------

    def start(self) -> None:
        n = self.args.tables
        venue = self.work / "venue"
        subprocess.run([*gg_arbiter(), "broker-config", "--tables", str(n), "--event", EVENT,
                        "--out", str(venue)], check=True, capture_output=True, timeout=60)
        # The rehearsal's own listener (counting rank tokens in every message) gets a
        # login of its own, read-only: with client ids bound to logins, borrowing the
        # hub's would take the serving hub's place, as the broker config intends.
        self.listener_secret = secrets_mod.token_urlsafe(16)
        subprocess.run(["mosquitto_passwd", "-b", str(venue / "passwd"), "listener",
                        self.listener_secret], check=True, capture_output=True, timeout=60)
        with (venue / "acl").open("a", encoding="utf-8") as acl:
            acl.write(f"\nuser listener\ntopic read gg/{EVENT}/#\n")
        conf = (venue / "mosquitto.conf").read_text()
        self.port = free_port()
        conf = "\n".join(f"listener {self.port} 127.0.0.1" if ln.startswith("listener ")
                         else ln for ln in conf.splitlines())
        self.broker = Mosquitto.with_config(self.work / "broker", conf, self.port).start()
        secrets = venue / "secrets"
        hub_data = self.work / "hub"
        subprocess.run([*gg_arbiter(), "hub", "--event", EVENT, "--data", str(hub_data),
                        "set-pin", PIN], check=True, capture_output=True, timeout=60)
        self.ledger_path = hub_data / "hub.sqlite"
        self.hub: Node = hub_node(hub_data, EVENT, f"mqtt://hub@127.0.0.1:{self.port}",
                                  "--password-file", str(secrets / "hub.password"))
        t0 = time.monotonic()
        self.hub.start()
        self.tables: dict[str, SimTable] = {}
        for i in range(1, n + 1):
            secret = urllib.parse.quote((secrets / f"table-{i}.password").read_text().strip())
            url = f"mqtt://table-{i}:{secret}@127.0.0.1:{self.port}"
            self.tables[str(i)] = sim_table(self.work, str(i), EVENT, url)
        for table in self.tables.values():
            table.node.launch()
        for table in self.tables.values():
            table.node.wait_ready()

        def all_online() -> bool:
            rows = self.hub.call("GET", "/api/venue")["tables"]
            return len(rows) == n and all(r["online"] is True for r in rows)

        poll(all_online, 120, "every table online on the hub", 0.2)
        self.figure(f"{n} tables started and online on the hub in {time.monotonic() - t0:.1f} s"
                    " (the hub's start included)")
        self.spy = Subscriber(self.port, f"gg/{EVENT}/table/+/+", username="listener",
                              password=self.listener_secret, client_id="rehearsal-listener")
        self.viewers = Viewers(self.hub.port, self.args.viewers)
        names = [f"Player {i:02d}" for i in range(1, 2 * n + 1)]
        self.hub.call("POST", "/api/organiser/players/import",
                      {"csv": "name,rating\n" + "".join(
                          f"{p},{2000 - 5 * i}\n" for i, p in enumerate(names))}, pin=True)
        self.cpu0, self.t0 = self.hub_cpu(), time.monotonic()

    def figure(self, text: str) -> None:
        print(text, flush=True)
        self.figures.append(text)

    def hub_cpu(self) -> float:
        assert self.hub.session is not None
        return cpu_seconds(self.hub.session.proc.pid)

    # --- a round -----------------------------------------------------------------

    def play_round(self, number: int, kills: bool) -> None:
        self.hub.call("POST", "/api/organiser/rounds", {"system": "swiss"}, pin=True)
        sent = time.monotonic()
        self.hub.call("POST", "/api/organiser/assign/round", {"round": number}, pin=True)
        boards = [b for b in self.hub.call("GET", "/api/rounds")[-1]["boards"] if not b["bye"]]
        assert self.hub.call("GET", "/api/rounds")[-1]["round"] == number
        games = {b["board"]: BoardGame(self.tables[b["table"]], {**b, "round": number})
                 for b in boards}
        seen: dict[int, float] = {}

        def assigned(game: BoardGame) -> None:
            def shown() -> bool:
                a = game.table.status().get("assignment") or {}
                return (a.get("round"), a.get("board")) == (number, game.board["board"])

            poll(shown, 60, f"table {game.name}'s assignment", 0.05)
            seen[game.board["board"]] = time.monotonic() - sent

        with ThreadPoolExecutor(len(games)) as pool:
            list(pool.map(assigned, games.values()))
        lat = list(seen.values())
        self.figure(f"round {number}: {len(games)} assignments shown at the tables within"
                    f" {max(lat):.2f} s (p50 {percentile(lat, 0.5):.2f} s)")

        def opening(game: BoardGame) -> None:
            game.table.new_game()
            game.table.challenge("W:SPY", "B:5*G")
            for attacker, defender in MIDDLE[:self.rng.randrange(len(MIDDLE))]:
                game.table.challenge(attacker, defender)

        with ThreadPoolExecutor(len(games)) as pool:
            list(pool.map(opening, games.values()))
        self.crawl(f"round {number}, games on")
        outcome = {b: self.rng.choice(("W", "B", None)) for b in games}
        ended: dict[int, float] = {}
        victim = games[min(games)] if kills else None

        def finish(game: BoardGame) -> None:
            board = game.board["board"]
            game.finish(outcome[board])
            ended[board] = time.time()

        with ThreadPoolExecutor(len(games)) as pool:
            rest = [g for g in games.values() if g is not victim]
            done = pool.map(finish, rest)
            if victim is not None:
                self.kills(victim)
                finish(victim)
            list(done)
        for board, winner in outcome.items():
            self.expected[(number, board)] = {"W": "1-0", "B": "0-1", None: "1/2-1/2"}[winner]
        arrived: dict[int, float] = {}

        def results_in() -> bool:
            for b in self.hub.call("GET", "/api/rounds")[number - 1]["boards"]:
                if b["result"] and b["board"] not in arrived:
                    arrived[b["board"]] = time.time()
            return len(arrived) >= len(games)

        poll(results_in, 120, f"round {number}'s results on the hub", 0.02)
        lag = [arrived[b] - ended[b] for b in games]
        self.figure(f"round {number}: every result on the hub within {max(lag):.2f} s of its"
                    f" game's end (p50 {percentile(lag, 0.5):.2f} s)"
                    + (" (a table, the hub and the broker killed meanwhile)" if kills else ""))

    def kills(self, victim: BoardGame) -> None:
        """Mid-round: a table (its game on), the hub, then the broker, each kill -9."""
        t = time.monotonic()
        victim.table.node.kill9()
        victim.table.node.start()
        self.figure(f"  table {victim.name} killed -9 mid-game, back in"
                    f" {time.monotonic() - t:.1f} s")
        cpu = self.hub_cpu()
        t = time.monotonic()
        self.hub.kill9()
        self.cpu_before_kill = getattr(self, "cpu_before_kill", 0.0) + cpu - self.cpu0
        self.hub.start()
        self.cpu0 = self.hub_cpu()
        self.figure(f"  hub killed -9, serving again in {time.monotonic() - t:.1f} s")
        t = time.monotonic()
        self.broker.kill()
        self.broker.start()
        self.figure(f"  broker killed -9, back in {time.monotonic() - t:.1f} s")

    # --- checks ----------------------------------------------------------------

    def crawl(self, when: str, games_on: bool = True) -> None:
        """Every public page (and, while games are on, each game's page): no rank."""
        games = [f"/games/{t}/{s.game}" for t, s in self.tables.items()] if games_on else []
        for path in PUBLIC + games:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.hub.port}{path}",
                                            timeout=10) as r:
                    text = r.read().decode("utf-8", "replace")
            except urllib.error.HTTPError as exc:
                text = exc.read().decode("utf-8", "replace")
            self.pages += 1
            self.leaks += [f"{when} {path}: {leak}" for leak in rank_leaks(text)]

    def difference(self, table: str, want: list[str]) -> str:
        """How the ledger's events of ``table`` differ from its journals, in a few words."""
        got = held(self.ledger_path, table)
        by_seq = {json.loads(e)["seq"]: e for e in got}
        wanted = {json.loads(e)["seq"]: e for e in want}
        missing = sorted(set(wanted) - set(by_seq))
        extra = sorted(set(by_seq) - set(wanted))
        other = sorted(s for s in set(wanted) & set(by_seq) if wanted[s] != by_seq[s])
        words = [f"{len(got)} held, {len(want)} in the journals"]
        if missing:
            words.append(f"missing seq {missing[:10]}")
        if extra:
            words.append(f"seq {extra[:10]} not in the journals")
        for seq in other[:3]:
            words.append(f"seq {seq} differs: hub {by_seq[seq][:160]} / table {wanted[seq][:160]}")
        with Ledger(self.ledger_path, EVENT) as ledger:
            refused = [r for r in ledger.events.rejections() if r[1] == table]
        words += [f"refused: {r}" for r in refused[:3]]
        return "; ".join(words)

    def check(self) -> None:
        n = self.args.tables
        for name, table in self.tables.items():
            want = table.expected()

            def same(table_name: str = name, events: list[str] = want) -> bool:
                return held(self.ledger_path, table_name) == events

            try:
                poll(same, 60, f"table {name}'s events in the ledger", 0.5)
            except SystemExit:
                self.problems.append(f"table {name}: the ledger differs from its journals: "
                                     + self.difference(name, want))
        events = sum(len(held(self.ledger_path, t)) for t in self.tables)
        self.figure(f"ledger: {events} events of {n} tables, identical to every table's"
                    f" journals: {not [p for p in self.problems if 'journals' in p]}")
        rounds = self.hub.call("GET", "/api/rounds")
        wrong = [(r["round"], b["board"], b["result"]) for r in rounds for b in r["boards"]
                 if not b["bye"] and b["result"] != self.expected[(r["round"], b["board"])]]
        self.problems += [f"round {r} board {b}: hub says {x}" for r, b, x in wrong]
        points: dict[str, float] = {}
        for r in rounds:
            for b in r["boards"]:
                result = self.expected.get((r["round"], b["board"]))
                white = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[result] if result else 1.0
                points[b["white"]] = points.get(b["white"], 0.0) + white
                if b["black"]:
                    points[b["black"]] = points.get(b["black"], 0.0) + 1.0 - white
        rows = self.hub.call("GET", "/api/standings")["rows"]
        off = [r["name"] for r in rows if r["score"] != points.get(r["name"], 0.0)]
        self.problems += [f"standings: {name}'s points" for name in off]
        self.figure(f"results: {len(self.expected) - len(wrong)} of {len(self.expected)} boards"
                    f" as played; standings: {len(rows) - len(off)} of {len(rows)} players'"
                    " points exact")
        self.crawl("after the event", games_on=False)  # the reveals are public now
        self.viewers.close()
        stream = b"".join(self.viewers.text).decode("utf-8", "replace")
        self.leaks += [f"venue stream: {leak}" for leak in rank_leaks(stream)]
        public = list(self.spy.messages)  # the subscription leaves record/<game> out
        for m in public:
            self.leaks += [f"mqtt {m.topic}: {leak}"
                           for leak in rank_leaks(m.payload.decode("utf-8", "replace"))]
        self.figure(f"rank tokens: {len(self.leaks)} in {self.pages} pages,"
                    f" {len(stream) // 1000} KB of venue stream ({self.viewers.messages}"
                    f" messages to {self.args.viewers} viewers) and {len(public)} MQTT"
                    " messages (records of finished games left out)")
        self.spy.close()

    def stop(self) -> None:
        for table in getattr(self, "tables", {}).values():
            table.node.stop()
        if hasattr(self, "hub"):
            self.hub.stop()
        if hasattr(self, "broker"):
            self.broker.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--viewers", type=int, default=50)
    parser.add_argument("--seed", type=int, default=19)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="venue-rehearsal-") as tmp:
        r = Rehearsal(args, Path(tmp))
        try:
            r.start()
            for number in range(1, args.rounds + 1):
                r.play_round(number, kills=number == 2)
            elapsed = time.monotonic() - r.t0
            cpu = getattr(r, "cpu_before_kill", 0.0) + r.hub_cpu() - r.cpu0
            r.figure(f"hub CPU over the event: {100 * cpu / elapsed:.0f} % of one core;"
                     f" venue feed {r.viewers.bytes / max(1, args.viewers) / elapsed / 1000:.2f}"
                     f" KB/s per viewer (gzip), streams reopened {r.viewers.reopened} times")
            r.check()
            with Ledger(r.ledger_path, EVENT) as ledger:
                problems = ledger.archive.verify()
            r.problems += [f"ledger verify: {p}" for p in problems]
        finally:
            r.stop()
        for leak in r.leaks[:20]:
            print("LEAK", leak)
        for problem in r.problems:
            print("PROBLEM", problem)
        print("rehearsal:", "passed" if not (r.leaks or r.problems) else "FAILED")
        return 1 if (r.leaks or r.problems) else 0


if __name__ == "__main__":
    raise SystemExit(main())
