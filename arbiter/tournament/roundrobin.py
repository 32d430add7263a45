"""Round robin by the Berger tables: everyone meets everyone once.

Players are numbered 1..n in seed order (n made even with a dummy whose
opponent has a bye). In round r the first board pairs player n with
a = 1 + (r-1)·n/2 (mod n-1), n having White in even rounds; board k pairs
a+(k-1) (White) with a-(k-1), counted mod n-1 in 1..n-1. This gives the
published FIDE Berger tables exactly (tests compare 4 and 6 players).
"""

from __future__ import annotations

from collections.abc import Sequence

from arbiter.tournament.errors import PairingError
from arbiter.tournament.model import Pairing


def _wrap(x: int, m: int) -> int:
    """x mod m, but in 1..m rather than 0..m-1."""
    return (x - 1) % m + 1


def berger_round(names: Sequence[str], round_number: int) -> list[Pairing]:
    """The pairings of ``round_number`` (1-based) for ``names`` in seed order."""
    if len(names) < 2:
        raise PairingError("a round robin needs two players or more")
    n = len(names) + len(names) % 2
    if not 1 <= round_number <= n - 1:
        raise PairingError(f"a round robin of {len(names)} players has rounds 1 to {n - 1}")
    seat: list[str | None] = [None, *names]  # 1-based; seat n is None for an odd count
    if len(seat) == n:
        seat.append(None)
    m = n - 1
    a = _wrap(1 + (round_number - 1) * (n // 2), m)
    numbered = [(n, a) if round_number % 2 == 0 else (a, n)]
    numbered += [(_wrap(a + k, m), _wrap(a - k, m)) for k in range(1, n // 2)]
    pairings: list[Pairing] = []
    byes: list[str] = []
    for w, b in numbered:
        white, black = seat[w], seat[b]
        if white is None or black is None:
            present = white if white is not None else black
            assert present is not None
            byes.append(present)
            continue
        pairings.append(Pairing(round_number, len(pairings) + 1, white, black))
    # The bye goes last, after the boards that are played.
    pairings += [Pairing(round_number, len(pairings) + 1, name, None) for name in byes]
    return pairings


def berger_schedule(names: Sequence[str]) -> list[list[Pairing]]:
    """Every round of the round robin for ``names`` in seed order."""
    n = len(names) + len(names) % 2
    return [berger_round(names, r) for r in range(1, n)]
