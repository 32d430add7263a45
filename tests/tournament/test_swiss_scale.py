"""The Swiss pairing's matching at scale: compressed weights, native integers, the size limit.

The speed itself is measured by bench/bench_swiss.py, not here.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest
import rustworkx as rx

from arbiter.tournament.errors import EventTooLargeError
from arbiter.tournament.model import Player
from arbiter.tournament.swiss import (
    BYTES_PER_PAIR,
    NATIVE_BITS,
    PAIRING_MEMORY,
    Edge,
    check_size,
    compress_weights,
    max_weight_matching,
    swiss_round,
)


def _total(weights: dict[Edge, int], matching: set[Edge]) -> int:
    return sum(weights[(a, b) if (a, b) in weights else (b, a)] for a, b in matching)


def _networkx_best(weights: dict[Edge, int]) -> int:
    graph = nx.Graph()
    graph.add_weighted_edges_from((a, b, w) for (a, b), w in weights.items())
    return _total(weights, nx.max_weight_matching(graph))


def _layered(rng: random.Random, vertices: int, density: float) -> dict[Edge, int]:
    """Weights as the criteria make them: small fields far apart in a wide integer, each
    field set on some edges only (like a bracket's own fields), many widths unused."""
    fields = sorted(rng.sample(range(0, 400), rng.randint(2, 12)))
    weights: dict[Edge, int] = {}
    for a in range(vertices):
        for b in range(a + 1, vertices):
            if rng.random() > density:
                continue
            w = 1 << 400  # the top field (completion) on every edge
            for place in fields:
                if rng.random() < 0.5:
                    w += rng.randint(1, 5) << place
            weights[a, b] = w
    return weights


@pytest.mark.parametrize("seed", range(40))
def test_compressed_weights_keep_the_best_matching(seed: int) -> None:
    rng = random.Random(seed)
    weights = _layered(rng, rng.randint(4, 16), rng.choice((0.3, 0.6, 1.0)))
    if not weights:
        return
    small = compress_weights(weights)
    assert set(small) == set(weights)
    assert max(small.values()).bit_length() < max(weights.values()).bit_length()
    # Whatever matching is best by the compressed weights is best by the real ones.
    ours = max_weight_matching(weights)
    assert _total(weights, ours) == _networkx_best(weights)


@pytest.mark.parametrize("seed", range(10))
def test_native_matching_is_exact_at_its_widest(seed: int) -> None:
    """rustworkx's integers hold weights of NATIVE_BITS bits and their duals exactly."""
    rng = random.Random(seed)
    n = rng.randint(6, 14)
    weights = {
        (a, b): rng.getrandbits(NATIVE_BITS) | (1 << (NATIVE_BITS - 1))
        for a in range(n)
        for b in range(a + 1, n)
        if rng.random() < 0.7
    }
    graph = rx.PyGraph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from([(a, b, w) for (a, b), w in weights.items()])
    native = rx.max_weight_matching(graph, weight_fn=lambda w: w)
    assert _total(weights, native) == _networkx_best(weights)


def test_an_event_too_large_for_memory_is_refused_before_pairing() -> None:
    most = 2
    while BYTES_PER_PAIR * (most + 1) * most // 2 <= PAIRING_MEMORY:
        most += 1
    check_size(most)  # the largest allowed passes
    players = [Player(f"P{i}", 0) for i in range(most + 1)]
    with pytest.raises(EventTooLargeError) as caught:
        swiss_round(players, [], 1, 9)
    assert caught.value.most == most
    assert f"at most {most} players" in str(caught.value)
    with pytest.raises(EventTooLargeError):
        check_size(9999)


def test_a_thousand_players_are_within_the_limit() -> None:
    check_size(1000)


def test_without_rustworkx_networkx_pairs_the_same() -> None:
    """32-bit ARM has no rustworkx wheel: the pairing is then networkx's alone, the same."""
    golden = Path(__file__).parent / "golden" / "dutch-021p-9r-seed8.trf"
    script = f"""
import sys
sys.modules["rustworkx"] = None  # import rustworkx: ImportError, as without the wheel
from arbiter.tournament import swiss
from arbiter.tournament.trf import import_trf
assert not swiss.HAVE_NATIVE and swiss.NATIVE_BITS == 0
event = import_trf(open({str(golden)!r}, encoding="utf-8").read())
for r in range(1, event.total_rounds + 1):
    before = [g for g in event.games if g.pairing.round < r]
    theirs = {{(g.pairing.white, g.pairing.black) for g in event.games if g.pairing.round == r}}
    ours = swiss.swiss_round(event.players, before, r, event.total_rounds)
    assert {{(p.white, p.black) for p in ours}} == theirs, r
print("same")
"""
    root = Path(__file__).parents[2]
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
        cwd=root, env={**os.environ, "PYTHONPATH": str(root)},
    )
    assert done.stdout.strip() == "same", done.stderr
