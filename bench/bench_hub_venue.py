"""Benchmark the hub at venue scale: 200 tables publishing, 1,000 viewers on its event stream.

Run: .venv/bin/python bench/bench_hub_venue.py [--tables 200] [--viewers 1000] [--seconds 60]

A real Mosquitto and a real ``gg-arbiter hub`` process (its own ledger, a
round-robin round of 2 x tables players, each board assigned to a table).
One process here plays every table: one paho client per table speaking the
table contract (online with a last will, retained status, QoS 1 events), a
challenge every 2 to 4 s per table (and its status). ``--viewers`` asyncio
clients in one process (one thread) hold ``/api/events`` open, asking for
``--encoding`` as a browser does (``Accept-Encoding``); each decodes its stream
(chunks, then gzip or deflate) and keeps its messages' ids, and ``--measured`` of
them parse it: the time from publishing a challenge to its table's change
arriving on a viewer is the latency. Prints how many of the hub's messages
reached every viewer, the hub's CPU (share of one core) and memory over the
run, the bytes each viewer received, latency p50/p99/max, and then
the time to replay the whole round (every table's events and game over) into
a freshly started hub with an empty ledger until every board has its result.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import json
import multiprocessing
import random
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import paho.mqtt.client as mqtt  # noqa: E402
from paho.mqtt.enums import CallbackAPIVersion  # noqa: E402

from arbiter.hub.ledger import Ledger  # noqa: E402
from arbiter.wire import AssignmentMessage  # noqa: E402
from tests.support.mqtt import Mosquitto  # noqa: E402
from tests.support.proc import cpu_seconds, memory_mb  # noqa: E402
from tests.support.spawn import free_port  # noqa: E402
from tests.support.sse import StreamDecoder  # noqa: E402


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def prepare(data: Path, event: str, tables: int) -> dict[str, AssignmentMessage]:
    """A ledger with 2 x tables players, round 1 paired and each board on table T<board>."""
    data.mkdir(parents=True)
    with Ledger(data / "hub.sqlite", event) as ledger:
        ledger.admin.import_players_csv(
            "name,rating\n" + "".join(f"P{i:03d},{3000 - i}\n" for i in range(2 * tables))
        )
        ledger.admin.pair_round("round-robin")
        return {f"T{p.pairing.board}": ledger.admin.assign_table(1, p.pairing.board,
                                                             f"T{p.pairing.board}", "bench")
                for p in ledger.admin.pairings(1)}


class HubProcess:
    def __init__(self, data: Path, event: str, broker: int, phases: Path | None = None) -> None:
        self.port = free_port()
        # With phases, bench/hub_phases.py runs the same command line with stamps.
        runner = (["-m", "arbiter.app.cli"] if phases is None
                  else [str(ROOT / "bench" / "hub_phases.py"), str(phases)])
        self.proc = subprocess.Popen(
            [sys.executable, *runner, "hub", "--event", event, "--data",
             str(data), "--broker", f"mqtt://127.0.0.1:{broker}", "--host", "127.0.0.1",
             "--port", str(self.port)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        assert self.proc.stdout is not None
        deadline = time.monotonic() + 30
        for line in self.proc.stdout:
            if "hub web on" in line:
                break
            if time.monotonic() > deadline:
                raise SystemExit("the hub did not start")
        threading.Thread(target=lambda: [None for _ in self.proc.stdout or []],
                         daemon=True).start()

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.proc.pid)

    def memory_mb(self) -> tuple[float, float]:
        """(RSS, peak RSS) in MB."""
        return memory_mb(self.proc.pid), memory_mb(self.proc.pid, "VmHWM")

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=30) as r:
            return json.loads(r.read())

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def carried(a: AssignmentMessage) -> dict[str, Any]:
    """The assignment as a table carries it into its NEW GAME: with the pairing's id,
    without which the hub does not score the game."""
    return {k: v for k, v in a.items() if k in ("round", "board", "white", "black", "pairing")}


class Tables:
    """Every table's paho client, and when each challenge was published."""

    def __init__(self, broker: int, event: str,
                 assignments: dict[str, AssignmentMessage]) -> None:
        self.slug = event
        self.with_status = True
        self.assignments = assignments
        self.clients: dict[str, mqtt.Client] = {}
        self.seq = dict.fromkeys(assignments, 0)
        self.challenges = dict.fromkeys(assignments, 0)
        self.sent: dict[tuple[str, int], float] = {}
        self.log: dict[str, list[dict[str, Any]]] = {t: [] for t in assignments}
        # When the broker acknowledged each challenge (PUBACK back at the table's client).
        self.mids: dict[tuple[str, int], tuple[str, int]] = {}
        self.early: dict[tuple[str, int], float] = {}  # acked before publish() returned
        self.acked: dict[tuple[str, int], float] = {}
        self.lock = threading.Lock()
        for name in assignments:
            c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"bench-{event}-{name}")
            c.max_inflight_messages_set(100)
            c.will_set(self.topic(name, "online"), b"false", qos=1, retain=True)
            c.user_data_set(name)
            c.on_publish = self._published
            c.connect("127.0.0.1", broker)
            c.loop_start()
            self.clients[name] = c

    def topic(self, table: str, kind: str) -> str:
        return f"gg/{self.slug}/table/{table}/{kind}"

    def publish(self, table: str, kind: str, body: Any, retain: bool = False) -> int:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        return self.clients[table].publish(self.topic(table, kind), raw, qos=1,
                                           retain=retain).mid

    def _published(self, _client: mqtt.Client, table: str, mid: int, *_rest: Any) -> None:
        with self.lock:
            mark = self.mids.pop((table, mid), None)
            if mark is None:
                self.early[(table, mid)] = time.time()
            else:
                self.acked[mark] = time.time()

    def event(self, table: str, body: dict[str, Any]) -> int:
        self.seq[table] += 1
        payload = {"format": 1, "table": table, "seq": self.seq[table], "game": 1, **body}
        self.log[table].append(payload)
        return self.publish(table, "events", payload)

    def start_games(self) -> None:
        for table, a in self.assignments.items():
            self.publish(table, "online", b"true", retain=True)
            self.event(table, {"type": "new_game", "at": time.time(),
                               "assignment": carried(a)})

    def challenge(self, table: str) -> None:
        self.challenges[table] += 1
        n = self.challenges[table]
        self.sent[(table, n)] = time.time()
        mid = self.event(table, {"type": "challenge", "number": n, "attacker_side": "W",
                                 "result": "attacker",
                                 "eliminated": {"W": min(n // 2, 21),
                                                "B": min((n + 1) // 2, 21)},
                                 "at": time.time()})
        with self.lock:
            if (table, mid) in self.early:
                self.acked[(table, n)] = self.early.pop((table, mid))
            else:
                self.mids[(table, mid)] = (table, n)
        if self.with_status:
            self.publish(table, "status", {"format": 1, "table": table, "state": "result",
                                           "game_id": 1, "challenge_count": n}, retain=True)

    def close(self) -> None:
        for c in self.clients.values():
            c.disconnect()
            c.loop_stop()


def viewers_main(port: int, count: int, measured: int, encoding: str, conn: Any) -> None:
    """In a process of its own: ``count`` open event streams, each an asyncio client
    (one thread for them all, as cheap as a viewer can be), the first ``measured``
    parsed. Every viewer keeps the ids of the messages it got. Says "ready" once every
    stream had its opening; on "go" starts counting the bytes read; on "stop" sends
    back when each challenge's change first arrived on each parsed viewer (wall clock),
    the bytes read since "go", each viewer's message ids, its status, and its CPU time."""
    asyncio.run(_viewers(port, count, measured, encoding, conn))


async def _viewers(port: int, count: int, measured: int, encoding: str, conn: Any) -> None:
    accept = "" if encoding == "identity" else f"Accept-Encoding: {encoding}\r\n"
    request = (f"GET /api/events HTTP/1.1\r\nHost: hub\r\nAccept: text/event-stream\r\n"
               f"{accept}\r\n").encode()
    arrivals: list[tuple[str, int, float]] = []
    decoders = [StreamDecoder(parse=i < measured) for i in range(count)]
    read = [0]
    opened = asyncio.Event()
    waiting = [count]

    async def viewer(i: int) -> None:
        decoder = decoders[i]
        seen: set[tuple[str, int]] = set()
        first = True
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 20)
            writer.write(request)
            while chunk := await reader.read(1 << 16):
                now = time.time()
                read[0] += len(chunk)
                messages = decoder.feed(chunk)
                if first and (decoder.ids or decoder.status not in (0, 200)):
                    first = False
                    waiting[0] -= 1
                    if not waiting[0]:
                        opened.set()
                for msg in messages:
                    if msg.get("type") == "snapshot":
                        changes = {row["table"]: row for row in msg["tables"]}
                    else:
                        changes = {t: f for t, f in (msg.get("patch") or {}).items() if f}
                    for table, fields in changes.items():
                        if "challenges" in fields and (table, fields["challenges"]) not in seen:
                            seen.add((table, fields["challenges"]))
                            arrivals.append((table, fields["challenges"], now))
        except OSError:
            pass
        finally:
            if first:
                waiting[0] -= 1
                if not waiting[0]:
                    opened.set()

    tasks = [asyncio.create_task(viewer(i)) for i in range(count)]
    await opened.wait()
    conn.send(("ready", sum(1 for d in decoders if d.ids)))
    loop = asyncio.get_running_loop()
    while True:
        order = await loop.run_in_executor(None, conn.recv)
        if order == "stop":
            break
        read[0] = 0  # "go"
    for task in tasks:
        task.cancel()
    conn.send(("done", arrivals, read[0], [d.ids for d in decoders],
               [d.status for d in decoders], time.process_time()))


class Viewers:
    """The viewers' process."""

    def __init__(self, port: int, count: int, measured: int, encoding: str) -> None:
        self.conn, child = multiprocessing.Pipe()
        self.proc = multiprocessing.Process(
            target=viewers_main, args=(port, count, measured, encoding, child), daemon=True)
        self.proc.start()

    def ready(self, timeout: float) -> int:
        """How many viewers got their stream's opening (0: none in ``timeout`` s)."""
        if not self.conn.poll(timeout):
            return 0
        tag, opened = self.conn.recv()
        return int(opened) if tag == "ready" else 0

    def go(self) -> None:
        self.conn.send("go")

    def finish(self) -> tuple[list[tuple[str, int, float]], int, list[list[str]], list[int],
                              float]:
        """(arrivals, bytes read since go, each viewer's message ids, each one's HTTP
        status, CPU seconds the viewers' process used)."""
        self.conn.send("stop")
        _tag, arrivals, total, ids, statuses, cpu = self.conn.recv()
        self.proc.join(10)
        return arrivals, total, ids, statuses, cpu


def delivery(ids: list[list[str]]) -> tuple[int, int, int, int]:
    """(messages the hub sent after the viewers' openings, deliveries expected, made,
    viewers that got every one): each viewer should get every message from the one
    after its opening's to the last any viewer got, once and in order."""
    seqs = [[int(i.rpartition(".")[2]) for i in got] for got in ids if got]
    last = max((s[-1] for s in seqs), default=0)
    first = min((s[0] for s in seqs), default=0)
    expected = made = whole = 0
    for s in seqs:
        want = list(range(s[0] + 1, last + 1))
        got = s[1:]
        expected += len(want)
        made += len(set(got) & set(want))
        whole += got == want
    return last - first, expected, made, whole


def run(args: argparse.Namespace, work: Path) -> None:
    # A hub that falls behind has its QoS 1 messages queued, not dropped (the default
    # queue of 1,000 per client is too short for a round replayed at once).
    broker = Mosquitto(work / "broker", extra="max_queued_messages 100000\n").start()
    try:
        assignments = prepare(work / "hub", "venue", args.tables)
        phases = work / "phases.json" if args.phases else None
        hub = HubProcess(work / "hub", "venue", broker.port, phases)
        tables = Tables(broker.port, "venue", assignments)
        tables.with_status = not args.no_status
        arrivals: list[tuple[str, int, float]] = []
        try:
            tables.start_games()
            viewers = Viewers(hub.port, args.viewers, args.measured, args.encoding)
            opened = viewers.ready(120)
            print(f"{args.tables} tables, {args.viewers} viewers: {opened} streaming"
                  f" ({args.encoding})")
            viewers.go()
            rng = random.Random(7)
            due = {t: time.monotonic() + rng.uniform(0, 3) for t in assignments}
            cpu0, t0 = hub.cpu_seconds(), time.monotonic()
            peak_rss = 0.0
            end = t0 + args.seconds
            while (now := time.monotonic()) < end:
                for table, when in due.items():
                    if when <= now:
                        tables.challenge(table)
                        due[table] = now + rng.uniform(2, 4)
                peak_rss = max(peak_rss, hub.memory_mb()[0])
                time.sleep(0.01)
            cpu = (hub.cpu_seconds() - cpu0) / (time.monotonic() - t0)
            time.sleep(2)  # the last messages reach the viewers
            elapsed = time.monotonic() - t0
            rss, hwm = hub.memory_mb()
            sent = sum(tables.challenges.values())
            arrivals, total, ids, statuses, viewer_cpu = viewers.finish()
            lat = [(at - tables.sent[(t, n)]) * 1000 for t, n, at in arrivals
                   if (t, n) in tables.sent]
            print(f"challenges published: {sent} in {args.seconds:.0f} s "
                  f"({sent / args.seconds:.0f}/s, each with a status: "
                  f"{2 * sent / args.seconds:.0f} messages/s into the hub)")
            print(f"hub CPU: {100 * cpu:.1f} % of one core; RSS {rss:.0f} MB (peak {hwm:.0f} MB,"
                  f" sampled {peak_rss:.0f} MB)")
            print(f"event to viewer ({args.measured} viewers parsed, {len(lat)} samples of "
                  f"{sent * args.measured}): p50 {percentile(lat, 0.5):.0f} ms, "
                  f"p99 {percentile(lat, 0.99):.0f} ms, max {max(lat, default=float('nan')):.0f}"
                  f" ms; {total / 1e6:.1f} MB read by the viewers, whose one reading thread"
                  f" used {100 * viewer_cpu / (time.monotonic() - t0):.0f} % of a core")
            print(f"feed per viewer: {total / args.viewers / elapsed / 1000:.2f} KB/s on the wire,"
                  f" {total / args.viewers / 1e6:.2f} MB over the run ({args.encoding}; headers,"
                  f" chunk sizes and keep-alives included)")
            messages, expected, made, whole = delivery(ids)
            refused = sum(1 for s in statuses if s != 200)
            print(f"updates: the hub sent {messages} messages; {made} of {expected} deliveries"
                  f" reached the viewers; {whole} of {args.viewers} viewers got every one"
                  f" ({refused} refused or never answered)")
        finally:
            tables.close()
            hub.stop()
        if phases is not None and arrivals:
            print_phases(json.loads(phases.read_text()), tables.sent, arrivals, tables.acked)
        if not args.no_replay:
            replay(broker.port, work, args.tables, tables.log)
    finally:
        broker.stop()


def print_phases(
    stamps: dict[str, Any], sent: dict[tuple[str, int], float],
    arrivals: list[tuple[str, int, float]], acked: dict[tuple[str, int], float],
) -> None:
    """Where each challenge's time went, from the hub's stamps (bench/hub_phases.py)."""
    received = {(t, n): at for t, n, at in stamps["received"]}
    committed = {(t, n): at for t, n, at in stamps["committed"]}
    flushes = sorted(stamps["flushes"])
    begins = [f[0] for f in flushes]
    views: dict[tuple[str, int], list[float]] = {}
    for t, n, at in arrivals:
        views.setdefault((t, n), []).append(at)
    steps: dict[str, list[float]] = {k: [] for k in (
        "(publish to broker's ack)", "broker to ingest", "ledger commit", "wait in the feed",
        "row reads", "into the queues", "queue to viewer", "whole way")}
    for mark, pub in sent.items():
        if mark not in received or mark not in committed or mark not in views:
            continue
        done = committed[mark]
        # The first send that began after the commit and carried the table.
        i = bisect.bisect_left(begins, done)
        flush = next((f for f in flushes[i:] if mark[0] in f[3]), None)
        if flush is None:
            continue
        begun, read, queued, _tables = flush
        if mark in acked:
            steps["(publish to broker's ack)"].append(acked[mark] - pub)
        steps["broker to ingest"].append(received[mark] - pub)
        steps["ledger commit"].append(done - received[mark])
        steps["wait in the feed"].append(begun - done)
        steps["row reads"].append(read - begun)
        steps["into the queues"].append(queued - read)
        steps["queue to viewer"] += [at - queued for at in views[mark]]
        steps["whole way"] += [at - pub for at in views[mark]]
    sizes = [len(f[3]) for f in flushes]
    print(f"phases ({len(steps['ledger commit'])} challenges joined, per challenge; the last two"
          f" per parsed viewer; {len(flushes)} sends of "
          f"{sum(sizes) / max(1, len(sizes)):.1f} tables on average):")
    took = [1000 * (done - begun) for begun, done, _n in stamps.get("batches", [])]
    size = [n for _b, _d, n in stamps.get("batches", [])]
    print(f"  the ingest's group commits: {len(took)} of {sum(size) / max(1, len(size)):.1f}"
          f" messages on average (largest {max(size, default=0)}); each took"
          f" p50 {percentile(took, 0.5):.1f} ms, p99 {percentile(took, 0.99):.1f} ms,"
          f" max {max(took, default=float('nan')):.1f} ms (commit, acks and telling the feed)")
    for gen in (0, 1, 2):
        ms = [1000 * took for g, took in stamps.get("gc", []) if g == gen]
        print(f"  garbage collections of generation {gen}: {len(ms)}, p50"
              f" {percentile(ms, 0.5):.1f} ms, max {max(ms, default=float('nan')):.1f} ms")
    threads = stamps.get("threads", {})
    print("  hub CPU seconds by thread: " + ", ".join(
        f"{name} {used:.1f}" for name, used in sorted(threads.items(), key=lambda i: -i[1])))
    for name, values in steps.items():
        ms = [1000 * v for v in values]
        print(f"  {name:<26} p50 {percentile(ms, 0.5):7.1f} ms  p99 {percentile(ms, 0.99):7.1f}"
              f" ms  max {max(ms, default=float('nan')):7.1f} ms")


def replay(broker: int, work: Path, count: int, log: dict[str, list[dict[str, Any]]]) -> None:
    """Every table's events of the round plus its game over, into a fresh hub."""
    assignments = prepare(work / "fresh", "replay", count)
    hub = HubProcess(work / "fresh", "replay", broker)
    tables = Tables(broker, "replay", assignments)
    events = 0
    try:
        t0 = time.perf_counter()
        for table, held in log.items():
            for e in held:
                body = {k: v for k, v in e.items() if k not in ("format", "table", "seq", "game")}
                if body["type"] == "new_game":  # this hub's pairing, with its own id
                    body["assignment"] = carried(assignments[table])
                tables.event(table, body)
            tables.event(table, {"type": "game_over",
                                 "ending": {"kind": "flag_captured", "winner": "W",
                                            "at": time.time()}})
            events += len(held) + 1
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            boards = hub.get("/api/rounds")[0]["boards"]
            if all(b["result"] for b in boards):
                break
            time.sleep(0.1)
        else:
            print("replay: not every result arrived in 120 s")
            return
        took = time.perf_counter() - t0
        print(f"replay of a {count}-table round ({events} events) into a fresh hub: "
              f"{took:.1f} s ({events / took:.0f} events/s), every board's result in")
    finally:
        tables.close()
        hub.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=int, default=200)
    parser.add_argument("--viewers", type=int, default=1000)
    parser.add_argument("--measured", type=int, default=25,
                        help="viewers whose messages are parsed for the latency")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--encoding", default="gzip", choices=("gzip", "deflate", "identity"),
                        help="what the viewers accept (Accept-Encoding), as a browser asks")
    parser.add_argument("--no-status", action="store_true",
                        help="tables publish events only (no retained status per challenge)")
    parser.add_argument("--no-replay", action="store_true",
                        help="skip the replay of the round into a fresh hub")
    parser.add_argument("--phases", action="store_true",
                        help="also print where the time goes, step by step (bench/hub_phases.py)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-hub-venue-") as tmp:
        run(args, Path(tmp))


if __name__ == "__main__":
    main()
