"""Maximum-weight matchings: rustworkx's (native, 128-bit integers) on weights
compressed without changing which matching is best, networkx's (pure Python, any width)
otherwise; and a quick search for a perfect matching."""

from __future__ import annotations

import math
from collections.abc import Callable

import networkx as nx

try:
    import rustworkx as rx

    HAVE_NATIVE = True
except ImportError:  # no wheel for 32-bit ARM: networkx makes every matching (exact, slower)
    HAVE_NATIVE = False

#: A pair of places in a bracket's list: (the lower one, the higher one).
Edge = tuple[int, int]

#: Players' choices for one matching, in order (see Matcher.compute).
#: (how many players; player i's addends by edge, made when needed; the radix).
Choices = tuple[int, Callable[[int], dict[Edge, int]], int]


class _Graph(nx.Graph):  # type: ignore[misc]
    """A networkx graph whose ``G[u][v]`` is the plain edge dict: the matching reads it
    millions of times, and the read-only views cost most of its time."""

    def __getitem__(self, n: int) -> dict[int, dict[str, int]]:
        adjacency: dict[int, dict[int, dict[str, int]]] = self._adj
        return adjacency[n]


def first_choice(
    small: dict[Edge, int], addends: dict[Edge, int], room: int, size: int
) -> set[Edge] | None:
    """A maximum-weight matching (by ``small``) that gives one player the edge of his
    highest addend that any maximum-weight matching has, when all his addends do not fit
    beside the weights. His edges, best first, are cut into at most ``2**room - 1``
    groups, ranked in the ``room`` bits below the weights: the weights' part of the
    total always stays the best (the addends are smaller than its last bit), so the
    matching pays the rank of the best group that holds his edge, and the search goes on
    in that group (with one bit: the shortest head of them that holds it, by halving).
    None: no edge of his is in any (the caller then makes the one pure-Python matching).
    """
    best_first = sorted(addends.items(), key=lambda item: -item[1])
    rest = [e for (a, b), _ in best_first if (e := (a, b) if a < b else (b, a)) in small]
    if not rest:
        return None
    probe = _Probe(small, room, size)
    if probe.window == 1:
        return _by_halving(probe, rest)
    while True:
        step = -(-len(rest) // probe.window)  # ceil: at most ``window`` groups
        groups = [rest[i : i + step] for i in range(0, len(rest), step)]
        place, found = probe.pays(groups)
        if place < 0:
            return None
        if step == 1:
            return found
        rest = groups[place]


def _by_halving(probe: _Probe, rest: list[Edge]) -> set[Edge] | None:
    """first_choice with one bit of room: the shortest head of ``rest`` that holds his edge."""
    if probe.pays([rest])[0] < 0:
        return None
    low, high = 0, len(rest)  # rest[:high] holds his edge, rest[:low] does not
    while high - low > 1:
        middle = (low + high) // 2
        if probe.pays([rest[:middle]])[0] < 0:
            low = middle
        else:
            high = middle
    return probe.pays([[rest[high - 1]]])[1]


class _Probe:
    """One native graph for every probe of first_choice: only his edges' weights change
    from one to the next, in the ``room`` bits below the weights ``small``."""

    def __init__(self, small: dict[Edge, int], room: int, size: int) -> None:
        self.small, self.room = small, room
        self.window = (1 << room) - 1
        self.graph = rx.PyGraph()
        self.graph.add_nodes_from(range(size))
        keys = list(small)
        edges = self.graph.add_edges_from([(a, b, small[a, b] << room) for a, b in keys])
        self.index = dict(zip(keys, edges, strict=True))

    def pays(self, groups: list[list[Edge]]) -> tuple[int, set[Edge]]:
        """The best group's place that a maximum-weight matching can draw an edge from
        (-1: none), and that matching."""
        small, room, window, graph, index = (
            self.small, self.room, self.window, self.graph, self.index
        )
        addend: dict[Edge, int] = {}
        for g, edges in enumerate(groups):
            for edge in edges:
                addend[edge] = window - g
                graph.update_edge_by_index(index[edge], (small[edge] << room) + window - g)
        found = {(a, b) if a < b else (b, a)
                 for a, b in rx.max_weight_matching(graph, weight_fn=_identity)}
        for edge in addend:
            graph.update_edge_by_index(index[edge], small[edge] << room)
        paid = max((addend.get(e, 0) for e in found), default=0)
        return (window - paid if paid else -1), found


#: The widest weight handed to rustworkx: its matching keeps weights and dual variables in
#: 128-bit signed integers. Against networkx on random graphs (tests/tournament/
#: test_swiss_scale.py) weights of 126 bits came out exact and 127 bits did not; one bit spare.
NATIVE_BITS = 125 if HAVE_NATIVE else 0


def compress_weights(weights: dict[Edge, int], exact: bool = False) -> dict[Edge, int]:
    """Weights that rank every matching of the graph as ``weights`` do, often far narrower.

    The weights are cut into runs of bit positions set in some weight, apart by runs set
    in none. A matching's sum of a run's values is at most its largest value times the
    number of edges that can carry one (half the players they touch): so the sums of
    all the runs below a gap stay under a bound, and where that bound keeps them below
    the next run both as given and with the gap shortened, the gap is shortened to what
    the bound needs. Either way no sum carries across the gap, so every matching's total
    keeps its place among the others. The criteria's fields are wide enough for a
    whole round, most of them empty or used by a few players in one bracket's matching.
    ``exact``: each run's bound is instead the largest sum a matching can make of its
    values (a native matching a run: slower, and narrower).
    """
    if not weights:
        return weights
    touched: dict[int, set[int]] = {}  # each weight: the players of its edges
    for (a, b), w in weights.items():
        ends = touched.get(w)
        if ends is None:
            touched[w] = {a, b}
        else:
            ends.add(a)
            ends.add(b)
    union = 0
    for w in touched:
        union |= w
    runs = _runs(union)
    fields = _lex_fields(runs, touched) if len(runs) > 1 else None
    if fields is not None:
        return _compress_fields(fields, touched, weights, exact)
    places = _places(runs, _bounds(runs, touched, weights, exact))
    if all(p == low for p, (low, _) in zip(places, runs, strict=True)):
        return weights
    mapped: dict[int, int] = {}
    for w in touched:
        c = 0
        for place, (low, width) in zip(places, runs, strict=True):
            c |= ((w >> low) & ((1 << width) - 1)) << place
        mapped[w] = c
    return {key: mapped[w] for key, w in weights.items()}


def _runs(union: int) -> list[tuple[int, int]]:
    """The runs of bit positions set in ``union``: (lowest bit, width), lowest first."""
    runs: list[tuple[int, int]] = []
    bit, top = (union & -union).bit_length() - 1, union.bit_length()
    while bit < top:
        end = bit
        while end < top and union >> end & 1:
            end += 1
        runs.append((bit, end - bit))
        bit = end
        while bit < top and not union >> bit & 1:
            bit += 1
    return runs


def _lex_fields(
    runs: list[tuple[int, int]], touched: dict[int, set[int]]
) -> list[dict[int, int]] | None:
    """The runs as fields that rank matchings in order, highest first, each run less what
    repeats a higher field; each field as its value for each weight, lowest field first.
    None: some run's sums can carry into the next one (by :func:`_bounds`' bound), so
    the runs do not rank matchings in order.

    When no sum carries, a matching's total ranks it by its runs' sums, the highest run
    first. Where the higher fields leave two matchings equal, a run's sum less ``c``
    times a higher field's sum ranks them as the run's sum does: so from each run the
    largest multiple of each higher field that leaves no value negative is taken away,
    and a run left empty (every edge's value that multiple of a higher one's, as the
    criteria's fields set on the same pairs are) is dropped. The criteria set several
    fields on every pair of the bracket, and the exchanges' field borrows from them.
    """
    below = 0
    for (low, _), bound in zip(runs, _bounds(runs, touched, {}, False), strict=True):
        if below >> low:
            return None
        below += bound << low
    values = list(touched)
    shapes: list[list[int]] = []  # the fields kept, highest first, divided by their gcd
    kept: list[list[int]] = []
    for low, width in reversed(runs):
        mask = (1 << width) - 1
        column = [(w >> low) & mask for w in values]
        for shape in shapes:
            c = min(v // s for v, s in zip(column, shape, strict=True) if s)
            if c:
                column = [v - c * s for v, s in zip(column, shape, strict=True)]
        if any(column):
            common = math.gcd(*column)
            shapes.append([v // common for v in column])
            kept.append(column)
    return [dict(zip(values, column, strict=True)) for column in reversed(kept)]


def _compress_fields(
    fields: list[dict[int, int]], touched: dict[int, set[int]], weights: dict[Edge, int],
    exact: bool,
) -> dict[Edge, int]:
    """Weights that put each field (lowest first, from :func:`_lex_fields`) just above
    the bound on the lower fields' sums: each bound as :func:`_bounds` makes it."""
    places: list[int] = []
    below = 0
    for field in fields:
        ends: set[int] = set()
        largest = 0
        for w, v in field.items():
            if v:
                ends |= touched[w]
                largest = max(largest, v)
        bound = largest * (len(ends) // 2)
        if exact and HAVE_NATIVE and largest.bit_length() < NATIVE_BITS // 2:
            values = {key: field[w] for key, w in weights.items() if field[w]}
            best = native_matching(values, 1 + max(max(key) for key in values))
            bound = sum(values[key if key in values else key[::-1]] for key in best)
        places.append(below.bit_length())
        below += bound << places[-1]
    mapped = {
        w: sum(field[w] << place for field, place in zip(fields, places, strict=True))
        for w in touched
    }
    return {key: mapped[w] for key, w in weights.items()}


def _bounds(
    runs: list[tuple[int, int]], touched: dict[int, set[int]], weights: dict[Edge, int],
    exact: bool,
) -> list[int]:
    """Each run's bound on a matching's sum of its values: its largest value times the
    edges a matching can give it, or (``exact``) the largest such sum itself."""
    bounds: list[int] = []
    for low, width in runs:
        mask = ((1 << width) - 1) << low
        ends = set()
        largest = 0
        for w, vs in touched.items():
            part = (w & mask) >> low
            if part:
                ends |= vs
                largest = max(largest, part)
        if exact and HAVE_NATIVE and largest and width < NATIVE_BITS // 2:
            values = {key: (w & mask) >> low for key, w in weights.items() if w & mask}
            best = native_matching(values, 1 + max(max(key) for key in values))
            bounds.append(sum(values[key if key in values else key[::-1]] for key in best))
        else:
            bounds.append(largest * (len(ends) // 2))
    return bounds


def _places(runs: list[tuple[int, int]], bounds: list[int]) -> list[int]:
    """Each run's new lowest bit, lowest run first (at bit 0): a gap shortened to what
    the sums below it need, where that keeps them below the run both ways."""
    places: list[int] = [0]
    below_old = bounds[0] << runs[0][0]
    below_new = bounds[0]
    for k in range(1, len(runs)):
        old_place = runs[k][0]
        old_gap = old_place - (runs[k - 1][0] + runs[k - 1][1])
        new_end = places[-1] + runs[k - 1][1]
        if below_old < 1 << old_place:
            place = max(new_end, below_new.bit_length())
        else:
            place = new_end + old_gap
        places.append(place)
        below_old += bounds[k] << old_place
        below_new += bounds[k] << place
    return places


def max_weight_matching(weights: dict[Edge, int]) -> set[Edge]:
    """A maximum-weight matching of the graph whose edges are ``weights``' keys (all
    weights positive): with rustworkx's native matching when the compressed weights fit
    its integers, else with networkx's (pure Python, any size, exact)."""
    small = compress_weights(weights)
    if max(small.values(), default=0).bit_length() > NATIVE_BITS:
        small = compress_weights(weights, exact=True)
    if max(small.values(), default=0).bit_length() <= NATIVE_BITS:
        return native_matching(small, 1 + max((max(a, b) for a, b in small), default=-1))
    return python_matching(weights)

def native_matching(weights: dict[Edge, int], size: int) -> set[Edge]:
    if not HAVE_NATIVE:
        return python_matching(weights)
    graph = rx.PyGraph()
    graph.add_nodes_from(range(size))
    graph.add_edges_from([(a, b, w) for (a, b), w in weights.items()])
    found: set[Edge] = rx.max_weight_matching(graph, weight_fn=_identity)
    return {(a, b) if a < b else (b, a) for a, b in found}


def python_matching(weights: dict[Edge, int]) -> set[Edge]:
    graph = _Graph()
    graph.add_weighted_edges_from((a, b, w) for (a, b), w in weights.items())
    found: set[Edge] = nx.max_weight_matching(graph)
    return found


def _identity(w: int) -> int:
    return w


def perfect_matching_found(near: dict[int, set[int]]) -> bool:
    """Whether a perfect matching of the graph ``near`` (vertex: its neighbours) was
    found: greedily, fewest neighbours first, then by alternating paths. True is
    certain (one was built); False may only mean the search missed it."""
    mate: dict[int, int] = {}
    for v in sorted(near, key=lambda v: (len(near[v]), v)):
        if v in mate:
            continue
        free = [u for u in near[v] if u not in mate]
        if free:
            u = min(free, key=lambda u: (len(near[u]), u))
            mate[v], mate[u] = u, v
    for root in sorted(near):
        if root in mate:
            continue
        # Breadth-first over alternating paths from ``root`` (no blossoms: may miss one).
        parent: dict[int, int] = {root: root}
        queue = [root]
        end = None
        while queue and end is None:
            x = queue.pop(0)
            for y in sorted(near[x]):
                if y in parent:
                    continue
                if y not in mate:
                    parent[y] = x
                    end = y
                    break
                z = mate[y]
                if z in parent:
                    continue
                parent[y] = x
                parent[z] = y
                queue.append(z)
        if end is None:
            return False
        y = end
        while True:
            x = parent[y]
            previous = mate.get(x)
            mate[x], mate[y] = y, x
            if x == root:
                break
            assert previous is not None
            y = previous
    return len(mate) == len(near)
