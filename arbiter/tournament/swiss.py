"""Swiss pairing by the FIDE Dutch system: Handbook C.04.3 as approved on 13 April 2024.

That version applies from 1 July 2025.

The rules' criteria, in their order, are encoded in the weight of each
possible pair, and every pairing bracket (a score group with the players
moved down to it) is solved as a maximum-weight matching over all the
players still unpaired, so the absolute criteria (C1-C3) and the completion
criterion (C4) always hold for the whole round. The field layout and the order
of the bracket's decisions (which moved-down players are paired, their
opponents, the exchanges between S1 and S2, then each S1 player's opponent,
highest first) follow the FIDE-endorsed engine bbpPairings v6, with which
the golden tests (tests/tournament/golden/) compare the pairings round by round.
(A bracket is matched over its own players alone when those it leaves below can
be shown to complete the round: the same result, found faster; see _Matcher.upper.)
The matchings are rustworkx's (native) on the weights compressed without changing
which matching is best (compress_weights), and networkx's (pure Python, any width)
for the few whose weights do not fit 125 bits even so.

Players are numbered in seed order (their pairing numbers, as in a TRF file).
Per player, from the games played before the round:

* score: win 1, draw ½, loss 0, the pairing-allocated bye 1; a game without
  a result counts nothing (the hub pairs a Swiss round only once all are in);
* colour difference and preference (A6): absolute when the difference is
  beyond ±1 or the same colour came twice running, strong when the
  difference is ±1, mild otherwise; the bye and absent rounds do not count;
* floats (A4): a downfloat when the player scored more than the opponent
  before that round, or had the bye; an upfloat when less; looked at for
  the last two rounds (C14-C21).

Absolute criteria: no two players meet twice (C1), nobody gets a second
pairing-allocated bye (C2), and two players with the same absolute colour
preference do not meet (C3), except in the final round when one of them
scored more than half the maximum (the topscorers' exception); this needs
the event's number of rounds (``total_rounds``). When no pairing meets them,
:class:`NoLegalPairingError` says so; nothing is ever relaxed.

Colours (E1-E5): both preferences met when they differ; else the stronger
preference (absolute with the larger difference, then absolute, then strong);
else alternate from the latest round in which the two had different colours;
else the higher-ranked player's preference; with none at all, the
higher-ranked player has the initial colour (White) when his pairing number
is odd, the other colour when it is even.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import networkx as nx

try:
    import rustworkx as rx

    HAVE_NATIVE = True
except ImportError:  # no wheel for 32-bit ARM: networkx makes every matching (exact, slower)
    HAVE_NATIVE = False

from arbiter.tournament.errors import (
    EventTooLargeError,
    NoLegalPairingError,
    PairingError,
    UnknownPlayerError,
)
from arbiter.tournament.model import (
    Bye,
    Colour,
    Game,
    Pairing,
    Player,
    check_unique,
    initial_colour,
)

#: The memory a round's pairing may take. The weights of every pair of players are held
#: at once, so it grows with the square of the players: measured at about 640 bytes a pair
#: (bench/bench_swiss.py: 112 MB at 500 players, 30 MB of it the interpreter). 1 GiB keeps
#: a 2 GB Raspberry Pi clear of the out-of-memory killer and pairs up to 1,832 players.
PAIRING_MEMORY = 1 << 30
BYTES_PER_PAIR = 640


def check_size(players: int) -> None:
    """EventTooLargeError when pairing ``players`` would need more than PAIRING_MEMORY."""
    need = BYTES_PER_PAIR * players * (players - 1) // 2
    if need > PAIRING_MEMORY:
        most = 2
        while BYTES_PER_PAIR * (most + 1) * most // 2 <= PAIRING_MEMORY:
            most += 1
        raise EventTooLargeError(players, need >> 20, PAIRING_MEMORY >> 20, most)


#: The higher-ranked player's colour in round 1 when his pairing number is odd (``XXC white1``),
#: unless the games played show another (model.initial_colour).
INITIAL_COLOUR = Colour.WHITE

#: A pair of places in a bracket's list: (the lower one, the higher one).
Edge = tuple[int, int]

#: Players' choices for one matching, in order (see _Matcher.compute).
#: (how many players; player i's addends by edge, made when needed; the radix).
Choices = tuple[int, Callable[[int], dict[Edge, int]], int]


class Float(enum.Enum):
    """How a player's pairing in a round compared with his score (A4)."""

    DOWN = "D"
    UP = "U"
    NONE = " "


@dataclass(frozen=True)
class _Round:
    """One past round of one player: an opponent with a colour, the bye, or nothing."""

    opponent: int | None  # pairing index; None: no game played
    colour: Colour | None
    points2: int  # points in half-points
    bye: bool


@dataclass
class _Entrant:
    """One player's state before the round: what the criteria read."""

    index: int  # seed order: pairing number - 1
    name: str
    rounds: list[_Round]
    score2: int  # half-points
    played: int
    imbalance: int  # |whites - blacks|
    preference: Colour | None
    repeated: Colour | None  # the colour had twice running, when so
    strong: bool
    bye_eligible: bool

    @property
    def absolute_imbalance(self) -> bool:
        return self.imbalance > 1

    @property
    def absolute(self) -> bool:
        return self.absolute_imbalance or self.repeated is not None

    def score_before(self, rounds_back: int) -> int:
        """Score (half-points) leaving out the last ``rounds_back`` rounds."""
        return sum(r.points2 for r in self.rounds[: len(self.rounds) - rounds_back])

    def float_in(self, rounds_back: int, everyone: Sequence[_Entrant]) -> Float:
        """The float of the round ``rounds_back`` before this one (1: the last)."""
        if rounds_back > len(self.rounds):
            return Float.NONE
        past = self.rounds[len(self.rounds) - rounds_back]
        if past.opponent is None:
            return Float.DOWN if past.points2 > 0 else Float.NONE
        mine = self.score_before(rounds_back)
        theirs = everyone[past.opponent].score_before(rounds_back)
        if mine > theirs:
            return Float.DOWN
        if mine < theirs:
            return Float.UP
        return Float.NONE


def _entrants(players: Sequence[Player], games: Sequence[Game], played: int) -> list[_Entrant]:
    index = {p.name: i for i, p in enumerate(players)}
    table: list[list[_Round]] = [
        [_Round(None, None, 0, False) for _ in range(played)] for _ in players
    ]
    for game in games:
        pg = game.pairing
        if not 1 <= pg.round <= played:
            continue
        w = index[pg.white]
        if pg.black is None:
            points2 = int(game.bye.points * 2)
            table[w][pg.round - 1] = _Round(None, None, points2, game.bye is Bye.PAIRING)
            continue
        b = index[pg.black]
        if game.forfeit:
            # Not a game: no opponent met, no colour; the points count (a float when won).
            for me, name in ((w, pg.white), (b, pg.black)):
                table[me][pg.round - 1] = _Round(None, None, int(2 * (game.points(name) or 0)),
                                                 False)
            continue
        sides = ((w, b, Colour.WHITE, pg.white), (b, w, Colour.BLACK, pg.black))
        for me, opp, colour, name in sides:
            points = game.points(name)
            table[me][pg.round - 1] = _Round(
                opp, colour, 0 if points is None else int(points * 2), False
            )
    out: list[_Entrant] = []
    for i, p in enumerate(players):
        rounds = table[i]
        whites = blacks = run = 0
        last: Colour | None = None
        for r in rounds:
            if r.colour is None:
                continue
            whites += r.colour is Colour.WHITE
            blacks += r.colour is Colour.BLACK
            run = run + 1 if r.colour is last else 1
            last = r.colour
        lower = Colour.BLACK if whites > blacks else Colour.WHITE
        imbalance = abs(whites - blacks)
        preference: Colour | None
        if imbalance > 1:
            preference = lower
        elif run > 1:
            assert last is not None
            preference = last.other
        elif imbalance > 0:
            preference = lower
        elif run:
            assert last is not None
            preference = last.other
        else:
            preference = None
        repeated = last if run > 1 else None
        absolute = imbalance > 1 or repeated is not None
        # A player who had a point without playing (the bye, a forfeit win) cannot get the bye.
        eligible = not any(r.bye or (r.opponent is None and r.points2 >= 2) for r in rounds)
        out.append(
            _Entrant(
                index=i,
                name=p.name,
                rounds=rounds,
                score2=sum(r.points2 for r in rounds),
                played=whites + blacks,
                imbalance=imbalance,
                preference=preference,
                repeated=repeated,
                strong=not absolute and imbalance > 0,
                bye_eligible=eligible,
            )
        )
    return out


class _Graph(nx.Graph):  # type: ignore[misc]
    """A networkx graph whose ``G[u][v]`` is the plain edge dict: the matching reads it
    millions of times, and the read-only views cost most of its time."""

    def __getitem__(self, n: int) -> dict[int, dict[str, int]]:
        adjacency: dict[int, dict[int, dict[str, int]]] = self._adj
        return adjacency[n]


class _Matcher:
    """A weighted graph on the players and its maximum-weight matching.

    Weights are set edge by edge; a finalised pair leaves the graph (its weight
    to every other player is zero, so every maximum matching keeps it).
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.weight: dict[tuple[int, int], int] = {}
        self.near: list[set[int]] = [set() for _ in range(size)]  # the edges, by player
        self.final: dict[int, int] = {}
        self.relaxed = False
        #: How many of the players given to the last compute() had their choice made.
        self.settled = 0
        #: While set, (U, c, sentinel, check): matchings are computed over U alone, each
        #: edge's weight less c(edge), and a player of U left unmatched gets ``sentinel``
        #: (a player below U) as mate. Dropping the players below U relaxes only the
        #: completion criterion, whose field is the same for every complete pairing: so
        #: when the players of U left unmatched can be completed below (``check``, given
        #: them; None: known for any), the result is a maximum matching of the whole.
        #: Otherwise the whole graph is matched.
        self.upper: (
            tuple[set[int], Callable[[int, int], int], int, Callable[[list[int]], bool] | None]
            | None
        ) = None

    def set(self, a: int, b: int, w: int) -> None:
        if a in self.final or b in self.final:
            return
        key = (a, b) if a < b else (b, a)
        if w > 0:
            self.weight[key] = w
            self.near[a].add(b)
            self.near[b].add(a)
        elif self.weight.pop(key, None) is not None:
            self.near[a].discard(b)
            self.near[b].discard(a)

    def finalise(self, a: int, b: int) -> None:
        self.final[a] = b
        self.final[b] = a
        for v in (a, b):
            for u in self.near[v]:
                self.weight.pop((u, v) if u < v else (v, u), None)
                if u not in (a, b):
                    self.near[u].discard(v)
            self.near[v] = set()

    def compute(self, choices: Choices | None = None) -> list[int]:
        """A maximum-weight matching: ``mate[v]`` (``v`` itself when unmatched).

        ``choices``: (players, each one's addends, their radix): below every weight, the
        first player's addend outweighs every later one's, so the matching gives each in
        turn the best the rest allows. As many as fit native integers are taken:
        :attr:`settled` says how many (all when no native matching is made).
        """
        if self.upper is not None:
            only, completion, sentinel, check = self.upper
            relaxed: dict[tuple[int, int], int] = {}
            for a in only:
                for b in self.near[a]:
                    if a < b and b in only:
                        w = self.weight[a, b] - completion(a, b)
                        if w > 0:
                            relaxed[a, b] = w
            mate = self._match(relaxed, choices)
            left = [v for v in only if mate[v] == v]
            if check is None or check(left):
                for v in left:
                    mate[v] = sentinel
                self.relaxed = True
                return mate
        self.relaxed = False
        return self._match(self.weight, choices)

    def _match(self, weights: dict[Edge, int], choices: Choices | None) -> list[int]:
        small = compress_weights(weights)
        width = max(small.values(), default=0).bit_length()
        if width > NATIVE_BITS:
            small = compress_weights(weights, exact=True)
            width = max(small.values(), default=0).bit_length()
        count, addends_of, radix = choices if choices else (0, _no_addends, 1)
        self.settled = count
        native = width + (radix.bit_length() if count else 0) <= NATIVE_BITS
        if count and not native and width < NATIVE_BITS:
            found = _first_choice(small, addends_of(0), NATIVE_BITS - width, self.size)
            if found is not None:
                self.settled = 1
                return self._mates(found)
        if count and native:
            self.settled = min(count, max(1, (NATIVE_BITS - width) // radix.bit_length()))
            weights = small
        if count:
            # Each taken player's addends, scaled so that the earlier one's outweighs the
            # sum of all later ones'; all of them below every weight's last bit.
            taken = self.settled
            shift = (radix**taken).bit_length()
            weights = {k: w << shift for k, w in weights.items()}
            for i in range(taken):
                place = radix ** (taken - 1 - i)
                for (a, b), w in addends_of(i).items():
                    key = (a, b) if a < b else (b, a)
                    if key in weights:
                        weights[key] += w * place
        elif native:
            weights = small
        return self._mates(
            _native_matching(weights, self.size) if native else _python_matching(weights)
        )

    def _mates(self, found: Iterable[Edge]) -> list[int]:
        mate = list(range(self.size))
        for a, b in self.final.items():
            mate[a] = b
        for a, b in found:
            mate[a] = b
            mate[b] = a
        return mate


def _first_choice(
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
    window = (1 << room) - 1
    best_first = sorted(addends.items(), key=lambda item: -item[1])
    rest = [e for (a, b), _ in best_first if (e := (a, b) if a < b else (b, a)) in small]
    # One graph for every probe: only his edges' weights change from one to the next.
    graph = rx.PyGraph()
    graph.add_nodes_from(range(size))
    keys = list(small)
    index = dict(zip(keys, graph.add_edges_from([(a, b, small[a, b] << room) for a, b in keys]),
                     strict=True))

    def pays(groups: list[list[Edge]]) -> tuple[int, set[Edge]]:
        """The best group's place that a maximum-weight matching can draw an edge from
        (-1: none), and that matching."""
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

    if not rest:
        return None
    if window == 1:
        place, found = pays([rest])
        if place < 0:
            return None
        low, high = 0, len(rest)  # rest[:high] holds his edge, rest[:low] does not
        while high - low > 1:
            middle = (low + high) // 2
            place, better = pays([rest[:middle]])
            if place < 0:
                low = middle
            else:
                high, found = middle, better
        return pays([[rest[high - 1]]])[1]
    while True:
        step = -(-len(rest) // window)  # ceil: at most ``window`` groups
        groups = [rest[i : i + step] for i in range(0, len(rest), step)]
        place, found = pays(groups)
        if place < 0:
            return None
        if step == 1:
            return found
        rest = groups[place]


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
    touched: dict[int, set[int]] = {}
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
    runs: list[tuple[int, int]] = []  # (lowest bit, width), lowest first
    bit, top = (union & -union).bit_length() - 1, union.bit_length()
    while bit < top:
        end = bit
        while end < top and union >> end & 1:
            end += 1
        runs.append((bit, end - bit))
        bit = end
        while bit < top and not union >> bit & 1:
            bit += 1
    # Each run's bound: its largest value times the edges a matching can give it.
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
            best = _native_matching(values, 1 + max(max(key) for key in values))
            bounds.append(sum(values[key if key in values else key[::-1]] for key in best))
        else:
            bounds.append(largest * (len(ends) // 2))
    # New places, lowest run first; the lowest goes to bit 0.
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
    if all(p == low for p, (low, _) in zip(places, runs, strict=True)):
        return weights
    mapped: dict[int, int] = {}
    for w in touched:
        c = 0
        for place, (low, width) in zip(places, runs, strict=True):
            c |= ((w >> low) & ((1 << width) - 1)) << place
        mapped[w] = c
    return {key: mapped[w] for key, w in weights.items()}


def max_weight_matching(weights: dict[Edge, int]) -> set[Edge]:
    """A maximum-weight matching of the graph whose edges are ``weights``' keys (all
    weights positive): with rustworkx's native matching when the compressed weights fit
    its integers, else with networkx's (pure Python, any size, exact)."""
    small = compress_weights(weights)
    if max(small.values(), default=0).bit_length() > NATIVE_BITS:
        small = compress_weights(weights, exact=True)
    if max(small.values(), default=0).bit_length() <= NATIVE_BITS:
        return _native_matching(small, 1 + max((max(a, b) for a, b in small), default=-1))
    return _python_matching(weights)


def _no_addends(_: int) -> dict[Edge, int]:
    return {}


def _native_matching(weights: dict[Edge, int], size: int) -> set[Edge]:
    if not HAVE_NATIVE:
        return _python_matching(weights)
    graph = rx.PyGraph()
    graph.add_nodes_from(range(size))
    graph.add_edges_from([(a, b, w) for (a, b), w in weights.items()])
    found: set[Edge] = rx.max_weight_matching(graph, weight_fn=_identity)
    return {(a, b) if a < b else (b, a) for a, b in found}


def _python_matching(weights: dict[Edge, int]) -> set[Edge]:
    graph = _Graph()
    graph.add_weighted_edges_from((a, b, w) for (a, b), w in weights.items())
    found: set[Edge] = nx.max_weight_matching(graph)
    return found


def _identity(w: int) -> int:
    return w


def _perfect_matching_found(near: dict[int, set[int]]) -> bool:
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


def _neutral_colour(me: _Entrant, other: _Entrant) -> Colour | None:
    """My colour by E1-E3, or None when it comes down to rank (E4) or to nothing (E5)."""
    mp, op = me.preference, other.preference
    if mp is None or op is None or mp is not op:
        if mp is not None:
            return mp
        if op is not None:
            return op.other
        return None
    if me.absolute and (me.imbalance > other.imbalance or not other.absolute):
        return mp
    if other.absolute and (other.imbalance > me.imbalance or not me.absolute):
        return op.other
    if me.strong and not other.strong:
        return mp
    if other.strong and not me.strong:
        return op.other
    # E3: alternate from the latest round in which the two had different colours.
    mine = [r.colour for r in me.rounds if r.colour is not None]
    theirs = [r.colour for r in other.rounds if r.colour is not None]
    i, j = len(mine) - 1, len(theirs) - 1
    while i >= 0 and j >= 0 and mine[i] is theirs[j]:
        i -= 1
        j -= 1
    if i >= 0 and j >= 0:
        return theirs[j]
    return None


def _colour(
    me: _Entrant, other: _Entrant, ranks_above: bool, initial: Colour = INITIAL_COLOUR,
    number: dict[int, int] | None = None,
) -> Colour:
    """My colour against ``other``; ``ranks_above``: I rank higher (score, then pairing number)."""
    neutral = _neutral_colour(me, other)
    if neutral is not None:
        return neutral
    if me.preference is None:
        # E5: the higher-ranked player has the initial colour when his pairing number is odd.
        higher = me if ranks_above else other
        place = higher.index if number is None else number[higher.index]
        higher_gets = initial if place % 2 == 0 else initial.other
        return higher_gets if ranks_above else higher_gets.other
    # E4: the higher-ranked player gets his preference.
    assert other.preference is not None
    return me.preference if ranks_above else other.preference.other


class _Criteria:
    """A round's players as the criteria see them: who may meet (C1-C3), the weight of
    each pair (C4-C21), the bye's score, and whether a bracket may be matched alone."""

    def __init__(
        self,
        people: list[_Entrant],
        active: list[_Entrant],
        played: int,
        total_rounds: int | None,
    ) -> None:
        self.people = people
        self.played = played
        self.final_round = total_rounds is not None and played >= total_rounds - 1
        # The players to pair by score, then pairing number: their place is their vertex.
        self.order = sorted(active, key=lambda e: (-e.score2, e.index))
        n = len(self.order)
        self.n = n
        self.score = [e.score2 for e in self.order]
        self.met = [
            {r.opponent for r in e.rounds if r.opponent is not None} for e in self.order
        ]
        # C3 reads these for every pair: a list lookup, not a property a time.
        self.index_of = [e.index for e in self.order]
        self.absolute_pref = [e.preference if e.absolute else None for e in self.order]
        # Bits to count the players of a score group, and each group's place above the lower ones.
        self.group_shift: dict[int, int] = {}
        shift = largest = run = 0
        for v in range(n - 1, -1, -1):
            run += 1
            if v == 0 or self.score[v] < self.score[v - 1]:
                self.group_shift[self.score[v]] = shift
                largest = max(largest, run)
                shift += run.bit_length()
                run = 0
        self.groups_shift = shift
        self.size_bits = largest.bit_length()
        self.bye_score = 0
        self.single_downfloater_bye = False
        self.unplayed_rank: dict[int, int] = {}
        self.float_cache: dict[tuple[int, int], Float] = {}
        self.incompatible: list[set[int]] | None = None
        self.not_candidate: list[bool] | None = None  # read once the bye's score is known
        self.low_shift = self.low_bits()

    # --- the criteria -----------------------------------------------------------------

    def floated(self, v: int, back: int) -> Float:
        key = (v, back)
        if key not in self.float_cache:
            self.float_cache[key] = self.order[v].float_in(back, self.people)
        return self.float_cache[key]

    def compatible(self, a: int, b: int) -> bool:
        """C1 and C3 (with the topscorers' exception in the final round)."""
        if self.index_of[b] in self.met[a]:
            return False
        pref = self.absolute_pref[a]
        if pref is None or pref is not self.absolute_pref[b]:
            return True
        return self.final_round and (
            self.score[a] > self.played or self.score[b] > self.played
        )

    def bye_candidate(self, v: int) -> bool:
        return self.order[v].bye_eligible and self.score[v] <= self.bye_score

    def _colour_fields(self, w: int, low: _Entrant, high: _Entrant, in_bracket: bool) -> int:
        bits = self.size_bits
        same = low.preference is high.preference
        w = (w << bits) | (
            in_bracket and not (low.absolute_imbalance and high.absolute_imbalance and same)
        )
        if low.imbalance == high.imbalance:
            repeat_ok = high.repeated is None or high.repeated is not low.repeated
        else:
            smaller = high if low.imbalance > high.imbalance else low
            repeat_ok = smaller.repeated is not (
                low.preference.other if low.preference is not None else None
            )
        w = (w << bits) | (
            in_bracket and (not (low.absolute and high.absolute) or not same or repeat_ok)
        )
        w = (w << bits) | (
            in_bracket
            and (low.preference is None or high.preference is None or not same)
        )
        w = (w << bits) | (
            in_bracket
            and (
                (not low.strong and not low.absolute)
                or (not high.strong and not high.absolute)
                or (low.absolute and high.absolute)
                or not same
            )
        )
        return w

    def edge(self, h: int, lo: int, in_bracket: bool, in_next: bool) -> int:
        """The weight of pairing ``h`` with ``lo`` (``h`` first in order); 0: not allowed."""
        if not self.compatible(h, lo):
            return 0
        bits, gbits = self.size_bits, self.groups_shift
        high, low = self.order[h], self.order[lo]
        sh, sl = self.score[h], self.score[lo]
        # C4 (completion) and C2 (bye eligibility).
        w = 1 + (not self.bye_candidate(h)) + (not self.bye_candidate(lo))
        # C6-C7: the most pairs, then the highest scores, in this bracket, then in the next.
        w = (w << bits) | in_bracket
        w = (w << gbits) | ((1 << self.group_shift[sh]) if in_bracket else 0)
        w = (w << bits) | in_next
        w = (w << gbits) | ((1 << self.group_shift[sh]) if in_next else 0)
        # C9: the fewest unplayed games for the bye's assignee.
        w <<= 2 * bits
        if self.single_downfloater_bye:
            if sh == self.bye_score:
                w |= self.unplayed_rank[high.played]
            if sl == self.bye_score:
                w += self.unplayed_rank[low.played]
        # C10-C13: colours.
        w = self._colour_fields(w, low, high, in_bracket)
        # C14-C21: repeated floats, one and two rounds back, then their scores.
        for back in (1, 2):
            if self.played < back:
                continue
            w <<= bits
            if in_bracket:
                w |= self.floated(lo, back) is Float.DOWN
                w += sh <= sl and self.floated(h, back) is Float.DOWN
            w <<= bits
            if in_bracket:
                w |= not (sh > sl and self.floated(lo, back) is Float.UP)
        for back in (1, 2):
            if self.played < back:
                continue
            w <<= gbits
            if in_bracket:
                w += (self.floated(lo, back) is Float.DOWN) << self.group_shift[sl]
                w += (self.floated(h, back) is Float.DOWN) << self.group_shift[sh]
            w <<= gbits
            if in_bracket and not (self.floated(lo, back) is Float.UP and sh > sl):
                w |= 1 << self.group_shift[sh]
        # Room for the bracket's own choices (exchanges, transpositions).
        return w << (3 * bits + 1)

    def lowest_bye_score(self) -> int | None:
        """The score the bye goes to, when a pairing search shows it at once, else None.

        The first matching of an odd round (weights above) leaves out a bye-eligible
        player of the lowest score group that allows one: its other fields only count
        the scores paired, highest first. So a legal pairing of everyone but one
        eligible player of the lowest group that has any is the answer; a pairing found
        is certain, a miss (or a bye in the top group, where the first matching's pairs
        matter too) leaves it to the matching.
        """
        incompatible = self._incompatible()
        everyone = set(range(self.n))
        for group in sorted(set(self.score)):
            if group >= self.score[0]:
                return None
            eligible = [
                v for v in range(self.n) if self.score[v] == group and self.order[v].bye_eligible
            ]
            for v in reversed(eligible):
                near = {u: everyone - incompatible[u] - {u, v} for u in everyone - {v}}
                if _perfect_matching_found(near):
                    return group
            if eligible:
                return None
        return None

    def low_bits(self) -> int:
        """The width of every field below completion (C4) in :meth:`edge`."""
        bits, gbits = self.size_bits, self.groups_shift
        width = bits + gbits + bits + gbits + 2 * bits + 4 * bits + 3 * bits + 1
        for back in (1, 2):
            if self.played >= back:
                width += 2 * bits + 2 * gbits
        return width

    def completion(self, a: int, b: int) -> int:
        """The completion field of the edge a-b, in place."""
        if self.not_candidate is None:
            self.not_candidate = [not self.bye_candidate(v) for v in range(self.n)]
        return (1 + self.not_candidate[a] + self.not_candidate[b]) << self.low_shift

    def relaxable(self, upper: list[int], below: int) -> bool:
        """Whether the players from ``below`` on weigh only in the completion field of
        the bracket's matchings (then :class:`_Matcher` may leave them out)."""
        if self.n - below < 2:
            return False
        # With an odd count the bye must fall below, where the rank of its played games
        # (C9) cannot weigh on the choices above.
        return self.n % 2 == 0 or (
            self.score[upper[-1]] > self.bye_score and not self.single_downfloater_bye
        )

    def completes(self, below: int) -> Callable[[list[int]], bool]:
        """A check that the players from ``below`` on, with those given, can all be
        paired (but one bye-eligible player when the count is odd): it looks for such a
        pairing, greedily and then by augmenting paths, and answers True only on finding
        one (a False may be wrong: the caller then matches the whole graph)."""
        incompatible = self._incompatible()

        def check(left: list[int]) -> bool:
            vertices = [*left, *range(below, self.n)]
            if self.n % 2:
                vertices.append(-1)  # the bye: pairs with any bye candidate
            inside = set(vertices)
            near: dict[int, set[int]] = {}
            for v in vertices:
                if v == -1:
                    near[v] = {u for u in inside if u != -1 and self.bye_candidate(u)}
                else:
                    near[v] = inside - incompatible[v] - {v, -1}
                    if self.n % 2 and self.bye_candidate(v):
                        near[v].add(-1)
            return _perfect_matching_found(near)

        return check

    def _incompatible(self) -> list[set[int]]:
        if self.incompatible is None:
            self.incompatible = [
                {u for u in range(self.n) if u != v and not self.compatible(v, u)}
                for v in range(self.n)
            ]
        return self.incompatible

    def separable(self, upper: list[int], below: int) -> bool:
        """Whether every choice within ``upper`` can be completed by the players from
        ``below`` on, whatever players of ``upper`` it leaves to them, the bye included.

        By Dirac's theorem a graph of m >= 3 vertices, each joined to at least m/2
        others, has a Hamiltonian cycle: a perfect matching when m is even, and one
        without any given vertex when m is odd. Here every player of ``upper`` and below
        must be compatible with enough of those below, however many of ``upper`` join them.
        """
        lower = self.n - below
        if lower < 3:
            return False
        incompatible = self._incompatible()
        need = (lower + len(upper)) / 2
        for v in [*upper, *range(below, self.n)]:
            inc = sum(1 for u in incompatible[v] if u >= below)
            if lower - 1 - inc < need:
                return False
        return True

    def check_complete(self, mate: list[int]) -> None:
        """NoLegalPairingError unless ``mate`` pairs everyone, but one bye-eligible player
        when the count is odd."""
        unmatched = [v for v in range(self.n) if mate[v] == v]
        if len(unmatched) > self.n % 2 or any(not self.order[v].bye_eligible for v in unmatched):
            raise NoLegalPairingError(
                self.played + 1,
                "no pairing keeps the absolute criteria (no rematch, one bye at most, no two"
                " players with the same absolute colour preference)",
            )


class _Dutch:
    """One round's pairing, bracket by bracket; see the module's docstring. It asks
    ``criteria`` (a :class:`_Criteria` it holds, not a base) who may meet and what each
    pair weighs, and tells it the bye's score once known."""

    def __init__(self, criteria: _Criteria) -> None:
        self.criteria = criteria

    def pair(self) -> tuple[list[tuple[int, int]], int | None]:
        n = self.criteria.n
        if all(
            r.opponent is None and not r.bye and not r.points2
            for e in self.criteria.order for r in e.rounds
        ):
            # Nobody has played: one homogeneous bracket, nobody has a colour, a float
            # or an opponent to avoid, so S1[i] meets S2[i] and the bye (an odd count)
            # goes to the last player, which is what the matching below finds too.
            half = n // 2
            return [(i, i + half) for i in range(half)], (n - 1 if n % 2 else None)
        score = self.criteria.score
        matcher = _Matcher(n)
        odd = n % 2 == 1
        for lo in range(n):
            for h in range(lo):
                if odd:
                    w = 0
                    if self.criteria.compatible(lo, h):
                        order = self.criteria.order
                        w = 1 + (not order[lo].bye_eligible) + (not order[h].bye_eligible)
                        w <<= self.criteria.groups_shift
                        shifts = self.criteria.group_shift
                        w |= shifts[score[lo]] + shifts[score[h]]
                        w <<= self.criteria.size_bits
                        w |= score[lo] >= score[0]
                    matcher.set(lo, h, w)
                else:
                    matcher.set(lo, h, self.criteria.edge(h, lo, False, False))
        if not odd:
            # Completion is the weights' first field: the first bracket's matching is
            # complete exactly when some pairing keeps the absolute criteria.
            return self._brackets(matcher)
        quick = self.criteria.lowest_bye_score()
        if quick is not None:
            self.criteria.bye_score = quick
        else:
            mate = matcher.compute()
            self.criteria.check_complete(mate)
            unmatched = [v for v in range(n) if mate[v] == v]
            self.criteria.bye_score = score[unmatched[0]]
            top = score[0]
            if self.criteria.bye_score >= top:
                self.criteria.single_downfloater_bye = all(
                    score[mate[v]] >= top for v in range(n) if score[v] >= top
                )
        if odd:
            bye_score = self.criteria.bye_score
            counts = sorted((self.criteria.order[v].played for v in range(n)
                             if score[v] == bye_score),
                            reverse=True)
            for rank, count in enumerate(counts):
                self.criteria.unplayed_rank[count] = rank
            for lo in range(n):
                for h in range(lo):
                    matcher.set(lo, h, self.criteria.edge(h, lo, False, False))
        return self._brackets(matcher)

    @staticmethod
    def _s1_choice(
        cur: list[int], s1: list[int], remainder: list[int], base: dict[Edge, int],
        matched: list[bool],
    ) -> Choices:
        """Addends that make each S1 player, in order, meet the highest-placed opponent the
        rest allows (see :meth:`_Matcher.compute`). Done one by one, each would be a
        matching with small addends on that player's edges; together they are one."""

        def addends_of(i: int) -> dict[Edge, int]:
            pi = s1[i]
            addends: dict[Edge, int] = {}
            for value, oi in enumerate(reversed(remainder), start=1):
                if oi > pi and not matched[cur[oi]] and base[oi, pi]:
                    addends[cur[pi], cur[oi]] = value
            return addends

        return len(s1), addends_of, len(remainder) + 1

    def _settle(
        self, matcher: _Matcher, mate: list[int] | None, s1: list[int], cur: list[int],
        remainder: list[int], base: dict[Edge, int], matched: list[bool],
        pairs: list[tuple[int, int]],
    ) -> list[int]:
        """Pair each player of ``s1``, in order, with the highest-placed opponent the rest
        allows; ``mate``: a matching already made with all their choices, if any."""
        while s1:
            if mate is None:
                mate = matcher.compute(self._s1_choice(cur, s1, remainder, base, matched))
            for pi in s1[: matcher.settled]:
                pv = cur[pi]
                mv = mate[pv]
                matched[pv] = matched[mv] = True
                matcher.finalise(pv, mv)
                pairs.append((pv, mv))
            s1 = s1[matcher.settled :]
            if s1:
                mate = None
        assert mate is not None
        return mate

    def _brackets(self, matcher: _Matcher) -> tuple[list[tuple[int, int]], int | None]:
        n, score, bits = self.criteria.n, self.criteria.score, self.criteria.size_bits
        matched = [False] * n
        pairs: list[tuple[int, int]] = []
        nxt = 0
        cur: list[int] = []
        while nxt < n and score[nxt] >= score[0]:
            cur.append(nxt)
            nxt += 1
        sgb = 0  # moved-down players at the head of ``cur``
        sgb_v = 0  # first vertex of the bracket's own score group
        while len(cur) > 1 or nxt < n:
            nsgb = len(cur)
            nsgb_v = sgb_v + (nsgb - sgb)
            group_start = nxt
            while nxt < n and score[nxt] >= score[group_start]:
                cur.append(nxt)
                nxt += 1
            base: dict[Edge, int] = {}
            for li in range(sgb, len(cur)):
                for si in range(li):
                    base[li, si] = self.criteria.edge(cur[si], cur[li], li < nsgb, li >= nsgb)
                    matcher.set(cur[li], cur[si], base[li, si])

            def remainder_edge(
                si: int, li: int, s_rem: int, rem_pairs: int, base: dict[Edge, int] = base
            ) -> int:
                # Fewest exchanges, then the smallest difference of the exchanged numbers.
                w = base[li, si]
                if w:
                    w += (((s_rem < rem_pairs) << (2 * bits)) - s_rem) << 1
                return w

            def in_bracket(v: int, low: int = sgb_v, high: int = nsgb_v) -> bool:
                return low <= v < high

            if self.criteria.relaxable(cur, nxt):
                criteria = self.criteria
                check = None if criteria.separable(cur, nxt) else criteria.completes(nxt)
                matcher.upper = (set(cur), self.criteria.completion, self.criteria.n - 1, check)
            mate = matcher.compute()
            if sgb_v == 0 and not matcher.relaxed:
                self.criteria.check_complete(mate)
            # Which moved-down players are paired in this bracket (C6-C7), highest first.
            md_score = -1
            left = left_matched = 0
            for pi in range(sgb):
                pv = cur[pi]
                if pi == 0 or score[pv] < md_score:
                    md_score = score[pv]
                    left = left_matched = 0
                    mi = pi
                    while mi < len(cur) and score[cur[mi]] >= md_score:
                        left += 1
                        left_matched += in_bracket(mate[cur[mi]])
                        mi += 1
                if not left_matched:
                    continue
                if left <= left_matched:
                    matched[pv] = True
                    continue
                left -= 1
                if not in_bracket(mate[pv]):
                    for oi in range(sgb, nsgb):
                        w = base[oi, pi]
                        if w:
                            matcher.set(pv, cur[oi], w | 1)
                    mate = matcher.compute()
                if in_bracket(mate[pv]):
                    matched[pv] = True
                    left_matched -= 1
                    for oi in range(sgb, nsgb):
                        w = base[oi, pi]
                        if w:
                            matcher.set(pv, cur[oi], (w | (nsgb - sgb)) + 1)
            # Their opponents: the highest-placed one the rest allows.
            for pi in range(sgb):
                pv = cur[pi]
                if not matched[pv]:
                    continue
                addend = len(cur)
                for oi in range(nsgb - 1, sgb - 1, -1):
                    ov = cur[oi]
                    if matched[ov]:
                        continue
                    w = base[oi, pi]
                    if w:
                        matcher.set(pv, ov, w + addend)
                        addend += 1
                mate = matcher.compute()
                mv = mate[pv]
                matched[mv] = True
                matcher.finalise(pv, mv)
                pairs.append((pv, mv))
            # The remainder: S1 and S2, with as few and as small exchanges as can be.
            remainder: list[int] = []
            rem_pairs = 0
            for pi in range(sgb, nsgb):
                pv = cur[pi]
                if mate[pv] < sgb_v:
                    continue
                remainder.append(pi)
                if mate[pv] < pv:
                    rem_pairs += 1
            for a, oi in enumerate(remainder):
                for b, pi in enumerate(remainder[:a]):
                    if oi <= pi:
                        break
                    matcher.set(cur[pi], cur[oi], remainder_edge(pi, oi, b, rem_pairs))
            # With the S1 players' choice of opponents (below) as the least significant
            # part: when no exchange is needed, this one matching settles the bracket.
            mate = matcher.compute(
                self._s1_choice(cur, remainder[:rem_pairs], remainder, base, matched)
            )
            exchanges = 0
            for pi in remainder[:rem_pairs]:
                pv = cur[pi]
                exchanges += mate[pv] <= pv or mate[pv] >= nsgb_v
            if not exchanges:
                mate = self._settle(
                    matcher, mate, remainder[:rem_pairs], cur, remainder, base, matched, pairs
                )
            todo = exchanges
            s_rem = rem_pairs
            it = rem_pairs
            while it > 0 and todo:
                opp_it = it
                s_rem -= 1
                it -= 1
                pv = cur[remainder[it]]
                if pv < mate[pv] < nsgb_v:
                    for oit in range(opp_it, len(remainder)):
                        w = remainder_edge(remainder[it], remainder[oit], s_rem, rem_pairs)
                        if w:
                            matcher.set(pv, cur[remainder[oit]], w - 1)
                    mate = matcher.compute()
                exchange = mate[pv] <= pv or mate[pv] >= nsgb_v
                todo -= exchange
                for oit in range(it + 1, len(remainder)):
                    if exchange:
                        base[remainder[oit], remainder[it]] = 0
                    matcher.set(
                        pv,
                        cur[remainder[oit]],
                        remainder_edge(remainder[it], remainder[oit], s_rem, rem_pairs),
                    )
            todo = exchanges
            r_index = rem_pairs
            for it in range(rem_pairs, len(remainder)):
                if todo <= 1:
                    break
                pv = cur[remainder[it]]
                already = pv < mate[pv] < nsgb_v
                if not already:
                    for oit in range(it + 1, len(remainder)):
                        w = remainder_edge(remainder[it], remainder[oit], r_index, rem_pairs)
                        if w:
                            matcher.set(pv, cur[remainder[oit]], w + 1)
                    mate = matcher.compute()
                if pv < mate[pv] < nsgb_v:
                    todo -= 1
                    for oit in range(it):
                        base[remainder[it], remainder[oit]] = 0
                        matcher.set(pv, cur[remainder[oit]], 0)
                    for oi in range(nsgb, len(cur)):
                        base[oi, remainder[it]] = 0
                        matcher.set(pv, cur[oi], 0)
                if not already:
                    for oit in range(it + 1, len(remainder)):
                        matcher.set(
                            pv,
                            cur[remainder[oit]],
                            remainder_edge(remainder[it], remainder[oit], r_index, rem_pairs),
                        )
                r_index += 1
            for it, pi in enumerate(remainder):
                pv = cur[pi]
                for oi in remainder[it + 1 :]:
                    ov = cur[oi]
                    if mate[pv] <= pv or mate[pv] >= nsgb_v or ov < mate[ov] < nsgb_v:
                        base[oi, pi] = 0
                    matcher.set(pv, ov, base[oi, pi])
            # Each S1 player, in order, meets the highest-placed opponent the rest allows.
            # Done one by one, each would be a matching with small addends on that player's
            # edges; as one matching instead, the addends are scaled so that S1[0]'s choice
            # outweighs every later one's, all below the smallest step of the weights.
            s1 = [
                pi for pi in remainder if not matched[cur[pi]] and cur[pi] < mate[cur[pi]] < nsgb_v
            ]
            if s1:
                mate = self._settle(matcher, None, s1, cur, remainder, base, matched, pairs)
            matcher.upper = None
            # What is left moves down to the next bracket.
            new_cur: list[int] = []
            new_sgb = 0
            self.criteria.single_downfloater_bye = (
                self.criteria.n % 2 == 1 and group_start < n
                and self.criteria.bye_score >= score[group_start]
            )
            for pi, pv in enumerate(cur):
                if pi < nsgb and matched[pv]:
                    continue
                new_cur.append(pv)
                if pi < nsgb:
                    new_sgb += 1
                if (
                    self.criteria.single_downfloater_bye
                    and group_start < n
                    and score[mate[pv]] < score[group_start]
                ):
                    self.criteria.single_downfloater_bye = False
            if new_cur == cur and group_start >= n:
                raise NoLegalPairingError(
                    self.criteria.played + 1, "the last bracket cannot be completed")
            cur = new_cur
            sgb = new_sgb
            sgb_v = nsgb_v
        bye = cur[0] if cur else None
        return pairs, bye

def swiss_round(
    players: Sequence[Player],
    games: Sequence[Game],
    round_number: int,
    total_rounds: int | None = None,
    initial: Colour | None = None,
) -> list[Pairing]:
    """The pairings of ``round_number`` for ``players`` (seed order) after ``games``.

    ``total_rounds`` (the event's number of rounds) lets the final round use the
    topscorers' exception to the colour criterion; without it none applies.
    ``initial``: the top seed's colour in the first round (TRF ``XXC``) while no game
    shows it; the games played show it (model.initial_colour); White without either.
    Raises :class:`NoLegalPairingError` when no pairing keeps the absolute criteria.
    """
    check_unique(players)
    known = {p.name for p in players}
    for g in games:
        for name in (g.pairing.white, g.pairing.black):
            if name is not None and name not in known:
                raise UnknownPlayerError(f"{name!r} played but is not a player")
    people = _entrants(players, games, round_number - 1)
    # A bye the organiser gave for this round (full, half, zero points) keeps a player out.
    away = {
        g.pairing.white
        for g in games
        if g.pairing.round == round_number and g.pairing.is_bye and g.bye is not Bye.PAIRING
    }
    active = [
        e for e, p in zip(people, players, strict=True) if not p.withdrawn and p.name not in away
    ]
    if len(active) < 2:
        raise PairingError("a round needs two players or more")
    check_size(len(active))
    dutch = _Dutch(_Criteria(people, active, round_number - 1, total_rounds))
    try:
        pairs, bye = dutch.pair()
    except NoLegalPairingError as exc:
        raise NoLegalPairingError(round_number, exc.reason) from None
    earlier = [g for g in games if g.pairing.round < round_number]
    if initial is None or any(g.pairing.black is not None for g in earlier):
        initial = initial_colour(players, earlier)
    # E5 counts pairing numbers as bbpPairings does: leaving out the players who have
    # not yet taken part in a pairing and are kept out of this one.
    took_part = {n for g in earlier if g.played or g.forfeit or (g.pairing.is_bye and
                 g.bye is Bye.PAIRING) for n in (g.pairing.white, g.pairing.black)}
    number: dict[int, int] = {}
    for e, p in zip(people, players, strict=True):
        if p.name in took_part or not (p.withdrawn or p.name in away):
            number[e.index] = len(number)
    return _boards(dutch, pairs, bye, round_number, initial, number)


def _boards(
    dutch: _Dutch, pairs: list[tuple[int, int]], bye: int | None, round_number: int,
    initial: Colour, number: dict[int, int],
) -> list[Pairing]:
    """Colours by E1-E5 and boards by the higher player's score, the lower's, then rank."""
    order = dutch.criteria.order
    out: list[tuple[tuple[int, int, int], Pairing]] = []
    for a, b in pairs:
        high, low = (order[a], order[b]) if a < b else (order[b], order[a])
        # As the engines do: colours are decided from the side of the lower pairing number.
        first, second = (high, low) if high.index < low.index else (low, high)
        colour = _colour(first, second, ranks_above=first is high, initial=initial, number=number)
        white, black = (first, second) if colour is Colour.WHITE else (second, first)
        key = (-high.score2, -low.score2, high.index)
        out.append((key, Pairing(round_number, 0, white.name, black.name)))
    out.sort(key=lambda kp: kp[0])
    boards = [
        Pairing(round_number, board, p.white, p.black)
        for board, (_, p) in enumerate(out, start=1)
    ]
    if bye is not None:
        boards.append(Pairing(round_number, len(boards) + 1, order[bye].name, None))
    return boards
