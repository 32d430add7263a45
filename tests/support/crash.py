"""Crash-state explorer for the game journal, in the spirit of ALICE (OSDI 2014).

A child process (:mod:`tests.support.crash_child`) plays a plan under ``strace``
and prints ``ACK ...`` after each acknowledged step. The trace is replayed on a
model of the data directory that keeps, for each file, its *durable* bytes and
the data operations (writes, truncations) issued since its last ``fsync``, and,
for each directory, its durable entries and the entry operations (create,
rename, unlink) issued since its last directory ``fsync``.

A power cut after the i-th modelled call can leave, for each file, the durable
bytes plus a *prefix* of its pending data operations, where the last one kept
may be cut short (its first byte, its first half, all but its last byte) or
reach the disk as zeros (the size updated before the data); and for each
directory its durable entries plus a prefix of its pending entry operations.
Each file and each directory is chosen independently; the cut is tried after
every modelled call.

Bounds, so it stays small: operations on one file, and entry operations in one
directory, persist in order (prefixes, not every subset; ext4 and most journalled
file systems keep metadata in order, and a journal line is one ``write``); torn
writes are cut at three points, not every byte; when the product of the choices
after one call exceeds ``max_per_cut`` a seeded random sample of that size is
taken (the states with nothing and with everything pending are always kept).
Identical states (same files, same acknowledgements) are checked once.

Each state is recovered with ``GameStore(repair=True)`` (and the tag registry
is loaded) and checked: both open, every acknowledged enrollment is there,
every acknowledged challenge, NEW GAME and ending is there, no challenge is
half-made or unreadable or different from the one played, game numbers run
without a gap, and every game but the newest is over (so it can be revealed).

The broker's outbox is checked too (issue 19): the events it derives (with their
sequence numbers) from what a reader beside the running store sees after each
call must extend those it derived after the call before, and the events derived
from each crash state, once recovered, must extend those derivable from the
state's durable part and agree with the live ones: a sequence number, once
given, never changes its content, and no ending is passed over.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from arbiter.fleet.outbox import Cursor, Outbox
from arbiter.fleet.payloads import event_payload, game_items
from arbiter.rules.game import Game
from arbiter.storage.journal import GameStore, list_game_ids, read_game
from arbiter.storage.registry import TagRegistry
from tests.support.tools import find_tool

CHILD = Path(__file__).with_name("crash_child.py")
TRACED = (
    "%file,write,pwrite64,fsync,fdatasync,rename,renameat,renameat2,unlink,ftruncate,openat,close"
)

_LINE = re.compile(r"^(?:\[pid\s+)?(\d+)\]?\s+(\w+)\((.*)\)\s+=\s+(-?\d+)(?:<([^>]*)>)?")
_HEX = re.compile(r"(?:\\x[0-9a-f]{2})+")


def _unhex(text: str) -> str:
    return _HEX.sub(
        lambda m: bytes.fromhex(m.group(0).replace("\\x", "")).decode("utf-8", "replace"), text
    )


def _strings(args: str) -> list[bytes]:
    """The quoted (hex-escaped, ``-xx``) strings among a call's arguments."""
    return [
        bytes.fromhex(s.replace("\\x", "")) for s in re.findall(r'"((?:\\x[0-9a-f]{2})*)"', args)
    ]


def _fd_path(args: str) -> tuple[int, str]:
    m = re.match(r"(-?\d+)<([^>]*)>", args)
    if m is None:
        return -1, ""
    return int(m.group(1)), _unhex(m.group(2))


# -- the model ------------------------------------------------------------------

DataOp = tuple[str, int, bytes]  # ("write", offset, data) or ("trunc", size, b"")
# ("link", name, "", inode), ("unlink", name, "", 0) or ("rename", old, new, 0)
EntryOp = tuple[str, str, str, int]


def _apply_data(content: bytes, op: DataOp) -> bytes:
    kind, at, data = op
    if kind == "trunc":
        return content[:at] + b"\0" * max(0, at - len(content))
    padded = content + b"\0" * max(0, at - len(content))
    return padded[:at] + data + padded[at + len(data) :]


def _apply_entry(entries: dict[str, int], op: EntryOp) -> dict[str, int]:
    kind, name, new, ino = op
    out = dict(entries)
    if kind == "link":
        out[name] = ino
    elif kind == "unlink":
        out.pop(name, None)
    elif name in out:
        out[new] = out.pop(name)
    return out


@dataclass
class _Inode:
    durable: bytes
    pending: list[DataOp] = field(default_factory=list)

    def choices(self) -> list[bytes]:
        """Every content a power cut could leave (see the module docstring)."""
        out = [self.durable]
        content = self.durable
        for op in self.pending:
            if op[0] == "write" and op[2]:
                data = op[2]
                for cut in {1, len(data) // 2, len(data) - 1} - {0, len(data)}:
                    out.append(_apply_data(content, ("write", op[1], data[:cut])))
                out.append(_apply_data(content, ("write", op[1], b"\0" * len(data))))
            content = _apply_data(content, op)
            out.append(content)
        return list(dict.fromkeys(out))

    def sync(self) -> None:
        for op in self.pending:
            self.durable = _apply_data(self.durable, op)
        self.pending.clear()

    def current(self) -> bytes:
        content = self.durable
        for op in self.pending:
            content = _apply_data(content, op)
        return content


@dataclass
class _Dir:
    durable: dict[str, int]
    pending: list[EntryOp] = field(default_factory=list)

    def choices(self) -> list[dict[str, int]]:
        out = [self.durable]
        for op in self.pending:
            out.append(_apply_entry(out[-1], op))
        return out

    def current(self) -> dict[str, int]:
        return self.choices()[-1]

    def sync(self) -> None:
        self.durable = self.current()
        self.pending.clear()


State = dict[str, dict[str, bytes]]  # directory (relative to the data dir) -> name -> bytes


@dataclass
class Cut:
    """The calls made before a power cut: what could be on disk, what was acknowledged."""

    index: int
    acks: tuple[str, ...]
    inodes: dict[int, _Inode]
    dirs: dict[str, _Dir]

    def states(self, limit: int, rng: random.Random) -> Iterator[State]:
        inos = [i for i, node in self.inodes.items() if node.pending]
        dnames = [d for d, node in self.dirs.items() if node.pending]
        axes: list[list[object]] = [list(self.inodes[i].choices()) for i in inos]
        axes += [list(self.dirs[d].choices()) for d in dnames]
        total = 1
        for axis in axes:
            total *= len(axis)
        if total <= limit:
            combos: list[tuple[object, ...]] = list(itertools.product(*axes))
        else:
            combos = [tuple(a[0] for a in axes), tuple(a[-1] for a in axes)]
            combos += [tuple(rng.choice(a) for a in axes) for _ in range(limit - 2)]
        for combo in combos:
            contents = {i: node.durable for i, node in self.inodes.items()}
            contents.update(zip(inos, combo[: len(inos)], strict=True))  # type: ignore[arg-type]
            entries = {d: node.durable for d, node in self.dirs.items()}
            entries.update(zip(dnames, combo[len(inos) :], strict=True))  # type: ignore[arg-type]
            yield {
                d: {name: contents[ino] for name, ino in ents.items()}
                for d, ents in entries.items()
            }


    def live(self) -> State:
        """What a reader beside the running process sees (every pending operation done)."""
        return {
            d: {name: self.inodes[ino].current() for name, ino in node.current().items()}
            for d, node in self.dirs.items()
        }

    def durable(self) -> State:
        """Only what is on the disk for sure."""
        return {
            d: {name: self.inodes[ino].durable for name, ino in node.durable.items()}
            for d, node in self.dirs.items()
        }


class _Replay:
    """Replays a trace on the model, yielding a :class:`Cut` after every modelled call."""

    def __init__(self, root: Path) -> None:
        self.root = str(root)
        self.inodes: dict[int, _Inode] = {}
        self.dirs: dict[str, _Dir] = {}
        self.fds: dict[int, tuple[int, bool]] = {}  # fd -> (inode, O_APPEND)
        self.pos: dict[int, int] = {}
        self.acks: list[str] = []
        self.calls = 0
        for d in (root, root / "games"):
            entries: dict[str, int] = {}
            for f in sorted(d.iterdir()):
                if f.is_file():
                    ino = len(self.inodes)
                    self.inodes[ino] = _Inode(f.read_bytes())
                    entries[f.name] = ino
            self.dirs[str(d.relative_to(root))] = _Dir(entries)

    def _split(self, path: str) -> tuple[str, str] | None:
        """(directory relative to the root, name) for a path inside a modelled directory."""
        if not path.startswith(self.root):
            return None
        rel = os.path.relpath(path, self.root)
        head, name = os.path.split(rel)
        head = head or "."
        return (head, name) if head in self.dirs else None

    def _cut(self) -> Cut:
        return Cut(
            self.calls,
            tuple(self.acks),
            {i: _Inode(n.durable, list(n.pending)) for i, n in self.inodes.items()},
            {d: _Dir(dict(n.durable), list(n.pending)) for d, n in self.dirs.items()},
        )

    def run(self, lines: list[str]) -> Iterator[Cut]:
        yield self._cut()
        for line in lines:
            m = _LINE.match(line)
            if m is None or int(m.group(4)) < 0:
                continue
            if self.step(m.group(2), m.group(3), int(m.group(4)), _unhex(m.group(5) or "")):
                self.calls += 1
                yield self._cut()

    def step(self, call: str, args: str, ret: int, ret_path: str) -> bool:
        fd, fd_path = _fd_path(args)
        if call == "write" and fd == 1:
            text = b"".join(_strings(args)).decode()
            self.acks += [a for a in text.splitlines() if a.startswith("ACK")]
            return True
        if call == "openat":
            where = self._split(ret_path) if ret_path else None
            if where is None or where[1] == "" or ret_path.rstrip("/") + "/" == self.root + "/":
                return False
            d, name = where
            if (
                os.path.join(d, name) in self.dirs
                or os.path.normpath(os.path.join(d, name)) in self.dirs
            ):
                return False  # a directory opened to be fsynced
            entries = self.dirs[d].current()
            if name not in entries:
                if "O_CREAT" not in args:
                    return False
                ino = len(self.inodes)
                self.inodes[ino] = _Inode(b"")
                self.dirs[d].pending.append(("link", name, "", ino))
            else:
                ino = entries[name]
                if "O_TRUNC" in args:
                    self.inodes[ino].pending.append(("trunc", 0, b""))
            self.fds[ret] = (ino, "O_APPEND" in args)
            self.pos[ret] = 0
            return True
        if call in ("fsync", "fdatasync"):
            where = self._split(fd_path)
            rel = os.path.relpath(fd_path, self.root) if fd_path.startswith(self.root) else None
            if rel in self.dirs:
                self.dirs[rel].sync()
                return True
            if fd in self.fds and where is not None:
                self.inodes[self.fds[fd][0]].sync()
                return True
            return False
        if call in ("write", "pwrite64") and fd in self.fds and self._split(fd_path):
            ino, append = self.fds[fd]
            data = b"".join(_strings(args))[:ret]
            node = self.inodes[ino]
            if call == "pwrite64":
                at = int(args.rsplit(",", 1)[1])
            elif append:
                at = len(node.current())
            else:
                at = self.pos[fd]
                self.pos[fd] = at + ret
            node.pending.append(("write", at, data))
            return True
        if call == "ftruncate" and fd in self.fds and self._split(fd_path):
            size = int(args.rsplit(",", 1)[1])
            self.inodes[self.fds[fd][0]].pending.append(("trunc", size, b""))
            return True
        if call == "close":
            self.fds.pop(fd, None)
            return False
        paths = [_unhex_bytes(s) for s in _strings(args)]
        if call == "truncate" and paths and (where := self._split(paths[0])):
            target = self.dirs[where[0]].current().get(where[1])
            if target is not None:
                self.inodes[target].pending.append(("trunc", int(args.rsplit(",", 1)[1]), b""))
                return True
        if call in ("unlink", "unlinkat") and paths and (where := self._split(paths[-1])):
            self.dirs[where[0]].pending.append(("unlink", where[1], "", 0))
            return True
        if call.startswith("rename") and len(paths) >= 2:
            old, new = self._split(paths[0]), self._split(paths[1])
            if old and new:
                if old[0] != new[0]:
                    raise AssertionError(f"rename across directories not modelled: {args}")
                self.dirs[old[0]].pending.append(("rename", old[1], new[1], 0))
                return True
        return False


def _unhex_bytes(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


# -- recording, recovering, checking ------------------------------------------------


@dataclass
class Report:
    """What one exploration did and found."""

    calls: int = 0
    cuts: int = 0
    states: int = 0
    failures: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        return (
            f"{self.calls} modelled calls, {self.cuts} cut points, "
            f"{self.states} distinct crash states checked, {len(self.failures)} failing"
        )


def strace_path() -> str | None:
    return find_tool("strace")


def record(data: Path, plan: str, seed: int, mutation: str, trace: Path) -> list[str]:
    """Run the child under strace; the trace's lines."""
    strace = strace_path()
    if strace is None:
        raise RuntimeError("strace is not installed (bash setup.sh --dev installs it)")
    cmd = [strace, "-f", "-o", str(trace), "-e", f"trace={TRACED}", "-y", "-s", "65536", "-xx"]
    cmd += [sys.executable, str(CHILD), str(data), plan, str(seed)] + (
        [mutation] if mutation else []
    )
    subprocess.run(cmd, check=True, timeout=120, capture_output=True)
    return trace.read_text().splitlines()


def _play_reference(data: Path) -> dict[int, Game]:
    return {gid: read_game(data, gid) for gid in list_game_ids(data)}


def _materialize(state: State, where: Path) -> None:
    for d, files in state.items():
        target = where / d
        target.mkdir(mode=0o700, parents=True, exist_ok=True)
        for name, content in files.items():
            (target / name).write_bytes(content)
            (target / name).chmod(0o600)


def _key(c: object) -> tuple[object, ...]:
    from arbiter.rules.game import Challenge

    assert isinstance(c, Challenge)
    return (c.number, str(c.attacker), str(c.defender), c.verdict)


def check(data: Path, acks: tuple[str, ...], reference: dict[int, Game]) -> list[str]:
    """What is wrong with the data directory after recovery (empty: nothing)."""
    try:
        store = GameStore(data, repair=True)
    except Exception as exc:
        return [f"the store does not open: {type(exc).__name__}: {exc}"]
    wrong: list[str] = []
    try:
        ids = store.game_ids()
        if ids != list(range(1, len(ids) + 1)):
            wrong.append(f"game numbers have a gap: {ids}")
        games = {gid: store.get(gid) for gid in ids}
        for gid, game in games.items():
            if game.unreadable:
                wrong.append(f"game {gid}: unreadable challenge(s) {game.unreadable}")
            ref = reference.get(gid)
            for ch in game.challenges:
                if (
                    ref is None
                    or ch.number > len(ref.challenges)
                    or _key(ch) != _key(ref.challenges[ch.number - 1])
                ):
                    wrong.append(f"game {gid}: challenge {ch.number} was never played")
            if gid != ids[-1] and not game.over:
                wrong.append(f"game {gid} is left open behind game {ids[-1]}: never revealable")
        wrong += _check_registry(data, [a.split() for a in acks if a.startswith("ACK t ")])
        for ack in acks:
            parts = ack.split()
            if parts[1] == "t":
                continue
            gid = int(parts[2])
            game_or_none = games.get(gid)
            if game_or_none is None:
                wrong.append(f"acknowledged game {gid} is gone ({ack})")
                continue
            if parts[1] == "c":
                number = int(parts[3])
                have = {ch.number: ch for ch in game_or_none.challenges}
                if number not in have or (
                    str(have[number].attacker),
                    str(have[number].defender),
                ) != (
                    parts[4],
                    parts[5],
                ):
                    wrong.append(f"lost an acknowledged challenge: {ack}")
            elif parts[1] == "r" and not game_or_none.over:
                wrong.append(f"lost an acknowledged ending: {ack}")
    except Exception as exc:
        wrong.append(f"reading the recovered store failed: {type(exc).__name__}: {exc}")
    finally:
        store.close()
    return wrong


def _check_registry(data: Path, enrolled: list[list[str]]) -> list[str]:
    """The tag registry opens and holds every acknowledged enrollment."""
    try:
        registry = TagRegistry.in_directory(data)
    except Exception as exc:
        return [f"the tag registry does not open: {type(exc).__name__}: {exc}"]
    return [
        f"lost an acknowledged enrollment: {' '.join(parts)}"
        for parts in enrolled
        if str(registry.lookup_physical(parts[2])) != parts[3]
    ]


Events = list[bytes]


def derive(data: Path, walk: str = "outbox") -> Events:
    """The events the table's outbox derives from ``data`` from the start, each as its
    payload (sequence number included). ``walk="past-open"`` walks as the outbox did
    before issue 19 (every game in turn, an open one included), for the mutation test."""
    if walk == "outbox":
        items = [(p.item, p.seq) for p in Outbox(data).pending(Cursor(), 1 << 30)]
    else:
        items, seq = [], 0
        for gid in list_game_ids(data):
            for item in game_items(read_game(data, gid)):
                seq += item.is_event
                items.append((item, seq))
    return [
        json.dumps(event_payload(item, table="t", seq=seq), sort_keys=True).encode()
        for item, seq in items
        if item.is_event and seq is not None
    ]


def _extends(longer: Events, shorter: Events) -> bool:
    return longer[: len(shorter)] == shorter


def _first_difference(a: Events, b: Events) -> str:
    for x, y in zip(a, b, strict=False):
        if x != y:
            return f"{x.decode()} became {y.decode()}"
    return f"{len(a)} event(s) became {len(b)}"


def _derived(state: State, where: Path, walk: str) -> Events:
    shutil.rmtree(where, ignore_errors=True)
    _materialize(state, where)
    try:
        return derive(where, walk)
    except Exception:  # a state a reader cannot read yet (a header half-written)
        return []


def check_outbox(live: Events, before: Events, durable: Events, recovered: Events) -> list[str]:
    """What is wrong with the outbox's derivations around one crash state (see the
    module docstring)."""
    wrong: list[str] = []
    if not _extends(live, before):
        wrong.append("the outbox renumbered what a reader beside the store derived: "
                     + _first_difference(before, live))
    if not _extends(recovered, durable):
        wrong.append("recovery changed events derived from durable data: "
                     + _first_difference(durable, recovered))
    if not (_extends(recovered, live) or _extends(live, recovered)):
        wrong.append("recovery disagrees with events a reader derived before the crash: "
                     + _first_difference(live, recovered))
    return wrong


def explore(
    plan: str,
    *,
    seed: int = 1,
    mutation: str = "",
    setup_plan: str = "cc",
    max_per_cut: int = 64,
    stop_after: int = 0,
    walk: str = "outbox",
) -> Report:
    """Record ``plan`` on a store that already played ``setup_plan``, then check every
    crash state (see the module docstring). ``stop_after`` > 0 stops at that many failures;
    ``walk`` is :func:`derive`'s."""
    from tests.support.crash_child import main as play

    report = Report()
    rng = random.Random(seed)
    seen: set[bytes] = set()
    with tempfile.TemporaryDirectory(prefix="gg-crash-") as tmp:
        base = Path(tmp)
        data = base / "data"
        # The starting point is durable: played in this process, then synced.
        _quiet(lambda: play(str(data), setup_plan, seed + 1000))
        os.sync()
        replay = _Replay(data)
        lines = record(data, plan, seed, mutation, base / "trace")
        reference = _play_reference(data)
        cuts = list(replay.run(lines))
        report.calls, report.cuts = len(cuts) - 1, len(cuts)
        scratch = base / "crash"
        before: Events = []
        for cut in cuts:
            live = _derived(cut.live(), scratch, walk)
            durable = _derived(cut.durable(), scratch, walk)
            for problem in check_outbox(live, before, durable, durable):
                report.failures.append(f"cut after call {cut.index}: {problem}")
            before = live
            for state in cut.states(max_per_cut, rng):
                digest = hashlib.sha256(repr((sorted(state.items()), cut.acks)).encode()).digest()
                if digest in seen:
                    continue
                seen.add(digest)
                report.states += 1
                shutil.rmtree(scratch, ignore_errors=True)
                _materialize(state, scratch)
                problems = check(scratch, cut.acks, reference)
                if not problems:  # recovered: the outbox now reads what the table publishes
                    problems = check_outbox(live, live, durable, derive(scratch, walk))
                for problem in problems:
                    report.failures.append(
                        f"cut after call {cut.index} ({len(cut.acks)} acks): {problem}"
                    )
                if stop_after and len(report.failures) >= stop_after:
                    return report
    return report


def _quiet(action: object) -> None:
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        action()  # type: ignore[operator]
