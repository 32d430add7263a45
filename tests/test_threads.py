"""BackgroundThread: the one thread lifecycle (start, stop that wakes and joins), the
registry of what runs, and the rule that no module starts any other kind of thread."""

from __future__ import annotations

import ast
import importlib.util
import queue
import threading
from pathlib import Path
from types import ModuleType

import pytest

from arbiter.errors import ThreadDeclarationError
from arbiter.threads import (
    BackgroundThread,
    ThreadKind,
    declare,
    running,
    stop_all,
)

ROOT = Path(__file__).resolve().parent.parent

WAITS = declare("test waits on its event", __name__, "a test thread waiting on stopping")
QUEUED = declare("test queue worker", __name__, "a test thread blocked on a queue")
ONCE = declare("test once", __name__, "a test thread that ends at once")


def test_threads_stop_sets_stopping_and_joins() -> None:
    seen: list[str] = []

    def run(stopping: threading.Event) -> None:
        while not stopping.wait(0.01):
            pass
        seen.append("ended")

    thread = BackgroundThread(run, WAITS)
    thread.start()
    assert thread.daemon and thread.name == "test waits on its event"
    assert thread.stop(timeout=5.0) is True
    assert not thread.is_alive() and seen == ["ended"]
    assert thread.stop() is True  # twice is harmless


def test_threads_wake_ends_a_thread_blocked_on_a_queue() -> None:
    items: queue.Queue[int | None] = queue.Queue()
    got: list[int] = []

    def run(_stopping: threading.Event) -> None:
        while (item := items.get()) is not None:  # blocks with no timeout
            got.append(item)

    thread = BackgroundThread(run, QUEUED, wake=lambda: items.put(None), label="queue 1")
    thread.start()
    assert thread.name == "queue 1" and thread.kind is QUEUED
    items.put(1)
    assert thread.stop(timeout=5.0) is True
    assert got == [1]


def test_threads_stop_before_start_and_from_inside() -> None:
    assert BackgroundThread(lambda s: None, ONCE).stop() is True
    results: list[bool] = []

    def run(stopping: threading.Event) -> None:
        results.append(holder[0].stop())  # asks only: a thread cannot join itself
        results.append(stopping.is_set())

    holder = [BackgroundThread(run, ONCE)]
    holder[0].start()
    holder[0].join(5.0)
    assert results == [False, True]


def test_registry_names_what_runs_and_stop_all_stops_every_one() -> None:
    items: queue.Queue[None] = queue.Queue()
    started = threading.Barrier(4)

    def waits(stopping: threading.Event) -> None:
        started.wait()
        stopping.wait()

    def blocked(_stopping: threading.Event) -> None:
        started.wait()
        items.get()  # no timeout: only its wake ends it

    ours = [BackgroundThread(waits, WAITS, label="w1"), BackgroundThread(waits, WAITS, label="w2"),
            BackgroundThread(blocked, QUEUED, wake=lambda: items.put(None))]
    for thread in ours:
        thread.start()
    started.wait(timeout=5)
    assert set(ours) <= set(running())
    assert {t.kind for t in ours} == {WAITS, QUEUED}
    left = stop_all(timeout=5.0)
    assert not [t for t in ours if t in left or t.is_alive()]
    assert not set(ours) & set(running())


def test_a_kind_is_declared_once_with_a_one_line_purpose() -> None:
    assert declare("test once", __name__, "a test thread that ends at once") is not None
    with pytest.raises(ThreadDeclarationError):
        declare("test once", "another.module", "a test thread that ends at once")
    with pytest.raises(ThreadDeclarationError):
        declare("test no purpose", __name__, " ")
    with pytest.raises(ThreadDeclarationError):
        declare("test two lines", __name__, "one\ntwo")
    with pytest.raises(ThreadDeclarationError):  # made by hand, so on no thread map
        BackgroundThread(lambda s: None, ThreadKind("test undeclared", __name__, "made"))


def _plain_threads(path: Path) -> list[str]:
    """Where ``path`` starts or subclasses a thread other than through BackgroundThread."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    thread_names = {"Thread", "Timer", "start_new_thread", "_start_new_thread"}
    found = []
    for node in ast.walk(tree):
        name = None
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        elif isinstance(node, ast.ClassDef):
            for base in node.bases:
                named = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", None)
                if named in thread_names:
                    name = named
        elif isinstance(node, ast.ImportFrom) and node.module in ("threading", "_thread"):
            name = next((a.name for a in node.names if a.name in thread_names), None)
        if name in thread_names:
            found.append(f"{path.name}:{getattr(node, 'lineno', '?')}: {name}")
    return found


#: The one thread pool that is not ours: waitress's task threads, which its server starts
#: (the dispatcher grown one thread per busy task) and its close stops.
WAITRESS_POOL = "web/kit/serve.py: start_new_thread"


def test_no_module_of_arbiter_or_web_starts_a_plain_thread() -> None:
    files = [p for package in ("arbiter", "web") for p in (ROOT / package).rglob("*.py")]
    assert len(files) > 50
    found = [f"{path.parent.relative_to(ROOT)}/{hit}" for path in files
             for hit in _plain_threads(path)
             if path != ROOT / "arbiter" / "threads.py"]  # BackgroundThread's own base
    pool = [hit for hit in found if hit.split(":")[0] + ": " + hit.rsplit(": ", 1)[1]
            == WAITRESS_POOL]
    assert len(pool) == 1, found
    found.remove(pool[0])
    assert found == [], "start a BackgroundThread (arbiter/threads.py):\n" + "\n".join(found)


def test_the_scan_finds_each_way_to_start_a_thread(tmp_path: Path) -> None:
    ways = {"threading.Thread(target=f).start()": "Thread",
            "from threading import Thread": "Thread",
            "threading.Timer(1, f).start()": "Timer",
            "class T(threading.Thread): pass": "Thread",
            "_thread.start_new_thread(f, ())": "start_new_thread"}
    for line, name in ways.items():
        path = tmp_path / "probe.py"
        path.write_text(line + "\n", encoding="utf-8")
        assert [hit.rsplit(": ", 1)[1] for hit in _plain_threads(path)] == [name], line
    path.write_text("BackgroundThread(run, KIND).start()\n", encoding="utf-8")
    assert _plain_threads(path) == []


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_thread_map",
                                                  ROOT / "scripts" / "gen_thread_map.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_thread_map_page_is_generated_fresh() -> None:
    generator = _generator()
    text = generator.thread_map()
    assert generator.PAGE.read_text(encoding="utf-8") == text, (
        "docs/develop/threads.md is stale: run python scripts/gen_thread_map.py")
    # every kind the code declares has its row, and no test's kind
    for name in ("arbiter", "hub-feed", "hub-web", "web", "watchdog", "taps", "new-game",
                 "console-printer", "enroll input", "monitor input", "stop watcher"):
        assert f"| `{name}` |" in text, name
    assert "test once" not in text
