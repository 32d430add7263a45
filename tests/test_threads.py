"""BackgroundThread: the one thread lifecycle (start, stop that wakes and joins)."""

from __future__ import annotations

import queue
import threading

from arbiter.threads import BackgroundThread


def test_threads_stop_sets_stopping_and_joins() -> None:
    seen: list[str] = []

    def run(stopping: threading.Event) -> None:
        while not stopping.wait(0.01):
            pass
        seen.append("ended")

    thread = BackgroundThread(run, "waits on its event")
    thread.start()
    assert thread.daemon and thread.name == "waits on its event"
    assert thread.stop(timeout=5.0) is True
    assert not thread.is_alive() and seen == ["ended"]
    assert thread.stop() is True  # twice is harmless


def test_threads_wake_ends_a_thread_blocked_on_a_queue() -> None:
    items: queue.Queue[int | None] = queue.Queue()
    got: list[int] = []

    def run(_stopping: threading.Event) -> None:
        while (item := items.get()) is not None:  # blocks with no timeout
            got.append(item)

    thread = BackgroundThread(run, "queue worker", wake=lambda: items.put(None))
    thread.start()
    items.put(1)
    assert thread.stop(timeout=5.0) is True
    assert got == [1]


def test_threads_stop_before_start_and_from_inside() -> None:
    assert BackgroundThread(lambda s: None, "never started").stop() is True
    results: list[bool] = []

    def run(stopping: threading.Event) -> None:
        results.append(holder[0].stop())  # asks only: a thread cannot join itself
        results.append(stopping.is_set())

    holder = [BackgroundThread(run, "stops itself")]
    holder[0].start()
    holder[0].join(5.0)
    assert results == [False, True]
