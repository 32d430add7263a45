"""The one lifecycle every background thread of the arbiter and the hub uses, and the
registry of what runs.

Like gpiozero's ``GPIOThread``: a daemon thread that carries a ``stopping`` event,
passed to its target, and a :meth:`BackgroundThread.stop` that sets it and joins.
Each kind of thread is declared once, at import, by the module that owns it
(:func:`declare`: a name, the module, a one-line purpose); the manual's thread map
is generated from those declarations (``scripts/gen_thread_map.py``), and
:func:`running` / :func:`stop_all` name and stop what runs now.
Standard library only, so every layer may import it.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass

from arbiter.errors import ThreadDeclarationError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ThreadKind:
    """A kind of background thread: its name, the module that starts it, what it does."""

    name: str
    owner: str
    purpose: str


_KINDS: dict[str, ThreadKind] = {}
_RUNNING: weakref.WeakSet[BackgroundThread] = weakref.WeakSet()
_LOCK = threading.Lock()  # never taken in a signal handler (see app/stopping.py)


def declare(name: str, owner: str, purpose: str) -> ThreadKind:
    """Declare a kind of thread (once per module, at import); the same again is harmless.

    :raises ThreadDeclarationError: the name is taken by another kind, or no purpose.
    """
    kind = ThreadKind(name, owner, purpose.strip())
    if not kind.purpose or "\n" in kind.purpose:
        raise ThreadDeclarationError(f"thread {name!r}: give a one-line purpose")
    with _LOCK:
        known = _KINDS.setdefault(name, kind)
    if known != kind:
        raise ThreadDeclarationError(f"thread {name!r} is declared by {known.owner} already")
    return kind


def declared() -> list[ThreadKind]:
    """Every kind declared so far (by the modules imported), by owner and name."""
    with _LOCK:
        return sorted(_KINDS.values(), key=lambda k: (k.owner, k.name))


def running() -> list[BackgroundThread]:
    """The background threads started and not yet ended."""
    with _LOCK:
        return [t for t in _RUNNING if t.is_alive()]


def stop_all(timeout: float = 5.0) -> list[BackgroundThread]:
    """Stop every running background thread (each within ``timeout`` s); those left."""
    return [t for t in running() if not t.stop(timeout)]


class BackgroundThread(threading.Thread):
    """A daemon thread running ``target(stopping)`` until ``stopping`` is set.

    The target should wait on ``stopping`` (``stopping.wait(timeout)``) or on a
    blocking call with a timeout, so that :meth:`stop` returns promptly. A target that
    waits on a queue or a server loop instead passes ``wake``, which :meth:`stop` calls
    after setting ``stopping`` (e.g. to put the queue's stop marker, or close the server).
    ``kind`` is the thread's declaration; ``label``, when given, is the thread's own
    name (two readers of one kind: ``gpio-keys-attacker``, ``gpio-keys-defender``).
    """

    def __init__(
        self,
        target: Callable[[threading.Event], None],
        kind: ThreadKind,
        *,
        wake: Callable[[], None] | None = None,
        label: str = "",
    ) -> None:
        with _LOCK:
            if _KINDS.get(kind.name) != kind:  # the thread map lists only declared kinds
                raise ThreadDeclarationError(f"thread {kind.name!r} is not declared")
        self.stopping = threading.Event()
        self.kind = kind
        self._wake = wake
        super().__init__(target=target, args=(self.stopping,), name=label or kind.name,
                         daemon=True)

    def start(self) -> None:
        with _LOCK:
            _RUNNING.add(self)
        super().start()

    def stop(self, timeout: float | None = 5.0) -> bool:
        """Ask the thread to stop and wait up to ``timeout`` s; True once it has ended.

        Safe to call twice, before :meth:`start`, and from the thread itself (it
        then only asks).
        """
        first = not self.stopping.is_set()
        self.stopping.set()
        if first and self._wake is not None and self.ident is not None:
            self._wake()
        if self.ident is None or self is threading.current_thread():
            return self.ident is None
        self.join(timeout)
        if self.is_alive():
            log.warning("thread %s did not stop within %s s", self.name, timeout)
            return False
        return True
