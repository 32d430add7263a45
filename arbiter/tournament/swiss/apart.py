"""A Swiss round paired in a process of its own (:func:`swiss_round_apart`), so that a big
pairing neither holds the server's threads (its work is another interpreter's) nor can
take the machine's memory: the process may map at most :data:`PAIRING_ADDRESS_SPACE`
bytes, and running out of them refuses the event (:class:`EventTooLargeError`) instead
of calling the out-of-memory killer.

One worker process is started (a fresh interpreter, no copy of the server; not
multiprocessing, which would import the server's main module again) on the first
pairing and kept for the next ones: each round goes to it pickled on its standard
input and comes back on its standard output, waited for without a thread.
"""

from __future__ import annotations

import atexit
import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import IO

from arbiter.tournament.errors import (
    EventTooLargeError,
    NoLegalPairingError,
    PairingError,
    UnknownPlayerError,
)
from arbiter.tournament.model import Colour, Game, Pairing, Player

#: The address space the pairing process may map: the pairing's own memory
#: (swiss.PAIRING_MEMORY, which check_size keeps an event under) and the interpreter's
#: with its libraries' reservations (about 0.5 GiB of mappings, little of it resident).
PAIRING_ADDRESS_SPACE = 3 << 29


@dataclass(frozen=True)
class _Refusal:
    """A PairingError as the worker sends it back: its class's name and arguments."""

    kind: str
    args: tuple[object, ...]


def _raise(refusal: _Refusal) -> None:
    """The worker's PairingError raised again here (its classes take their own arguments)."""
    args = refusal.args
    if refusal.kind == "NoLegalPairingError":
        raise NoLegalPairingError(int(str(args[0])), str(args[1]))
    if refusal.kind == "EventTooLargeError":
        players, needed, limit, most, ran_out = (int(str(a)) for a in args)
        raise EventTooLargeError(players, needed, limit, most, bool(ran_out))
    if refusal.kind == "UnknownPlayerError":
        raise UnknownPlayerError(str(args[0]))
    raise PairingError(str(args[0]))


def _refusal(exc: PairingError) -> _Refusal:
    if isinstance(exc, NoLegalPairingError):
        return _Refusal("NoLegalPairingError", (exc.round, exc.reason))
    if isinstance(exc, EventTooLargeError):
        return _Refusal(
            "EventTooLargeError",
            (exc.players, exc.needed_mb, exc.limit_mb, exc.most, int(exc.ran_out)),
        )
    return _Refusal(type(exc).__name__, (str(exc),))


#: The worker's first lines: the limit is set before anything is imported.
_BOOT = (
    "import resource, sys\n"
    "resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))\n"
    "from arbiter.tournament.swiss.apart import serve\n"
    "serve({limit})\n"
)


def serve(address_space: int) -> None:
    """The worker's loop: pair each round read from standard input, answer on standard
    output, until standard input closes. Runs in the pairing process."""
    from arbiter.tournament.swiss import swiss_round

    requests, answers = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # standard output carries the answers alone
    while True:
        try:
            players, games, number, total, initial = pickle.load(requests)
        except EOFError:
            return
        reply: list[Pairing] | _Refusal | None = None
        try:
            reply = swiss_round(players, games, number, total, initial)
        except PairingError as exc:
            reply = _refusal(exc)
        except MemoryError:
            pass  # answered below, once the failed pairing's frames are let go
        if reply is None:
            count = sum(not p.withdrawn for p in players)
            mb = address_space >> 20
            reply = _Refusal("EventTooLargeError", (count, mb, mb, _most_within(count), 1))
        pickle.dump(reply, answers)
        answers.flush()


def _most_within(players: int) -> int:
    """The most players to promise after running out with ``players``: fewer than them,
    and no more than swiss.check_size allows."""
    from arbiter.tournament.swiss import BYTES_PER_PAIR, PAIRING_MEMORY

    most = 2
    while BYTES_PER_PAIR * (most + 1) * most // 2 <= PAIRING_MEMORY:
        most += 1
    return min(most, players - 1)


class _Worker:
    """The pairing process and its pipes, started when first needed, restarted when gone."""

    def __init__(self, address_space: int = PAIRING_ADDRESS_SPACE) -> None:
        self.lock = threading.Lock()  # one pairing at a time on the one pipe
        self.process: subprocess.Popen[bytes] | None = None
        self.address_space = address_space
        self.ended: int | None = None  # the exit code of the last worker that ended

    def _start(self) -> tuple[IO[bytes], IO[bytes]]:
        process = self.process
        if process is None or process.poll() is not None:
            self.close()
            # The parent's import path, as multiprocessing hands it on.
            path = os.pathsep.join(p for p in sys.path if p)
            process = subprocess.Popen(
                [sys.executable, "-c", _BOOT.format(limit=self.address_space)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": path},
            )
            self.process = process
        assert process.stdin is not None and process.stdout is not None
        return process.stdin, process.stdout

    def pair(self, request: tuple[object, ...]) -> list[Pairing] | _Refusal:
        """The worker's answer to ``request``: asked again of a new worker once when the
        worker ends before answering (it may have been stopped while idle)."""
        with self.lock:
            reply = self._ask(request)
            if reply is None:
                reply = self._ask(request)
            if reply is None:
                raise PairingError(
                    f"the pairing process ended before answering (exit code {self.ended});"
                    " nothing was paired"
                )
            return reply

    def _ask(self, request: tuple[object, ...]) -> list[Pairing] | _Refusal | None:
        """The worker's answer, or None when it ended first (its exit code: ``ended``)."""
        to_worker, from_worker = self._start()
        try:
            pickle.dump(request, to_worker)
            to_worker.flush()
            reply: list[Pairing] | _Refusal = pickle.load(from_worker)
            return reply
        except (EOFError, OSError, pickle.UnpicklingError):
            self.ended = self.process.wait() if self.process is not None else None
            self.close()
            return None

    def close(self) -> None:
        """Stop the worker (the next pairing starts another)."""
        process, self.process = self.process, None
        if process is None:
            return
        assert process.stdin is not None and process.stdout is not None
        process.stdin.close()  # its loop ends at the end of its input
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        process.stdout.close()


_WORKER = _Worker()
# The worker ends at the end of its input anyway; closing it here waits for it.
atexit.register(_WORKER.close)


def swiss_round_apart(
    players: Sequence[Player],
    games: Sequence[Game],
    round_number: int,
    total_rounds: int | None = None,
    initial: Colour | None = None,
) -> list[Pairing]:
    """:func:`arbiter.tournament.swiss.swiss_round`, computed in the pairing process.

    Raises what it raises; :class:`EventTooLargeError` also when the pairing ran out of
    the process's address space.
    """
    reply = _WORKER.pair((list(players), list(games), round_number, total_rounds, initial))
    if isinstance(reply, _Refusal):
        _raise(reply)
    assert isinstance(reply, list)
    return reply


def pairing_process() -> int | None:
    """The pairing process's id while it runs (None: not started, or gone)."""
    process = _WORKER.process
    return process.pid if process is not None and process.poll() is None else None


def stop_pairing_process() -> None:
    """End the pairing process, if any (the next pairing starts another)."""
    with _WORKER.lock:
        _WORKER.close()
