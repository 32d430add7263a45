"""The weighted graph a round's brackets are matched on, edge by edge (:class:`Matcher`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from arbiter.tournament.swiss.matching import (
    NATIVE_BITS,
    Choices,
    Edge,
    compress_weights,
    first_choice,
    native_matching,
    python_matching,
)


class Matcher:
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
            found = first_choice(small, addends_of(0), NATIVE_BITS - width, self.size)
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
            native_matching(weights, self.size) if native else python_matching(weights)
        )

    def _mates(self, found: Iterable[Edge]) -> list[int]:
        mate = list(range(self.size))
        for a, b in self.final.items():
            mate[a] = b
        for a, b in found:
            mate[a] = b
            mate[b] = a
        return mate


def _no_addends(_: int) -> dict[Edge, int]:
    return {}
