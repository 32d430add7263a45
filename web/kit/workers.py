"""A bounded pool of declared threads running the Flask app's requests for the
asynchronous server (:mod:`web.kit.aserve`): the loop hands each request to one of
them, so a slow page never holds the loop, and their number never grows."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, ParamSpec, TypeVar

from arbiter.threads import BackgroundThread, declare

WORKER = declare("web-worker", __name__,
                 "runs the Flask app's requests for the asynchronous server (a bounded pool)")

_P = ParamSpec("_P")
_T = TypeVar("_T")


class WorkerPool(Executor):
    """A fixed pool of declared threads (:data:`WORKER`) running calls in their order."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self._queue: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]] | None] = (
            queue.SimpleQueue())
        self._closed = False
        self._threads = [BackgroundThread(self._work, WORKER, label=f"web-worker-{n}")
                         for n in range(workers)]
        for thread in self._threads:
            thread.start()

    def submit(self, fn: Callable[_P, _T], /, *args: _P.args,
               **kwargs: _P.kwargs) -> Future[_T]:
        if self._closed:
            raise RuntimeError("the worker pool is shut down")
        future: Future[_T] = Future()
        self._queue.put((future, lambda: fn(*args, **kwargs)))
        return future

    def _work(self, stopping: threading.Event) -> None:
        while not stopping.is_set():
            item = self._queue.get()
            if item is None:
                return
            future, call = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = call()
            except BaseException as exc:  # handed to whoever waits for it
                future.set_exception(exc)
            else:
                future.set_result(result)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._closed = True
        for _thread in self._threads:  # every thread told first, then each waited for
            self._queue.put(None)
        for thread in self._threads:
            thread.stop(5.0 if wait else 0.0)
