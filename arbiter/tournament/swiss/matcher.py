"""The weighted graph a round's brackets are matched on, edge by edge (:class:`Matcher`)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable

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
        #: While set, (A, B, relaxed): matchings are computed over the pairs of A with B
        #: alone, their weights as the last compute() took them (less the completion
        #: field when ``relaxed``): the caller knows the rest of the round is worth the
        #: same whatever they choose (brackets._s2_for).
        self.within: tuple[set[int], set[int], bool] | None = None
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
        # The weights over ``upper``'s players (_relaxed_weights) and the ``upper`` they
        # are for: set() and finalise() keep them up to date while it stays.
        self._relaxed: dict[Edge, int] | None = None
        self._relaxed_for: object = None
        # Likewise the weights of ``within``'s pairs (_within_weights).
        self._within: dict[Edge, int] | None = None
        self._within_for: object = None

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
        cache = self._relaxed
        if cache is not None and self.upper is not None:
            only, completion, _, _ = self.upper
            if a in only and b in only:
                less = w - completion(a, b) if w > 0 else 0
                if less > 0:
                    cache[key] = less
                else:
                    cache.pop(key, None)

    def set_all(self, weights: dict[Edge, int]) -> None:
        """Every pair's weight at once, in place of all those set (keys: (lower, higher));
        before any pair is finalised."""
        assert not self.final
        near: list[set[int]] = [set() for _ in range(self.size)]
        for (a, b), w in weights.items():
            if w > 0:
                near[a].add(b)
                near[b].add(a)
        self.near = near
        self.weight = {key: w for key, w in weights.items() if w > 0}
        self._relaxed = None

    def finalise(self, a: int, b: int) -> None:
        self.final[a] = b
        self.final[b] = a
        cache = self._relaxed if self._relaxed is not None else {}
        within = self._within if self._within is not None else {}
        for v in (a, b):
            for u in self.near[v]:
                key = (u, v) if u < v else (v, u)
                self.weight.pop(key, None)
                cache.pop(key, None)
                within.pop(key, None)
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
        if self.within is not None:
            return self._match(self._within_weights(), choices)
        if self.upper is not None:
            only, _, sentinel, check = self.upper
            mate = self._match(self._relaxed_weights(), choices)
            left = [v for v in only if mate[v] == v]
            if check is None or check(left):
                for v in left:
                    mate[v] = sentinel
                self.relaxed = True
                return mate
        self.relaxed = False
        return self._match(self.weight, choices)

    def _within_weights(self) -> dict[Edge, int]:
        """The weights of :attr:`within`'s pairs: made once for each, then kept up to
        date by finalise() (nothing else changes while it is set)."""
        assert self.within is not None
        if self._within is not None and self._within_for is self.within:
            return self._within
        side, other, relaxed = self.within
        weight, near = self.weight, self.near
        pairs = {(a, b) if a < b else (b, a) for a in side for b in near[a] if b in other}
        if relaxed:
            assert self.upper is not None
            completion = self.upper[1]
            weights = {key: weight[key] - completion(*key) for key in pairs}
        else:
            weights = {key: weight[key] for key in pairs}
        self._within = {key: w for key, w in weights.items() if w > 0}
        self._within_for = self.within
        return self._within

    def set_many(self, pairs: list[tuple[int, int, int]]) -> None:
        """set(a, b, w) for each of ``pairs``: at once while neither :attr:`upper` nor
        :attr:`within` is set (a bracket opening: the bulk of the weights)."""
        if self.upper is not None or self.within is not None:
            for a, b, w in pairs:
                self.set(a, b, w)
            return
        weight, near, final = self.weight, self.near, self.final
        for a, b, w in pairs:
            if a in final or b in final:
                continue
            key = (a, b) if a < b else (b, a)
            if w > 0:
                weight[key] = w
                near[a].add(b)
                near[b].add(a)
            elif weight.pop(key, None) is not None:
                near[a].discard(b)
                near[b].discard(a)

    def _relaxed_weights(self) -> dict[Edge, int]:
        """The weights over :attr:`upper`'s players alone, less the completion field:
        made once for each :attr:`upper`, then kept up to date by set() and finalise()."""
        assert self.upper is not None
        if self._relaxed is not None and self._relaxed_for is self.upper:
            return self._relaxed
        only, completion, _, _ = self.upper
        relaxed: dict[Edge, int] = {}
        for a in only:
            for b in self.near[a]:
                if a < b and b in only:
                    w = self.weight[a, b] - completion(a, b)
                    if w > 0:
                        relaxed[a, b] = w
        self._relaxed, self._relaxed_for = relaxed, self.upper
        return relaxed

    def pairs_outside(self, v: int, inside: Collection[int]) -> list[tuple[int, int]]:
        """``v``'s partners outside ``inside`` with their weights, as the last compute()
        took them (over :attr:`upper`'s players less completion when it was relaxed)."""
        if self.relaxed:
            assert self.upper is not None
            only, completion, _, _ = self.upper
            found = []
            for u in self.near[v]:
                if u in only and u not in inside:
                    w = self.weight[(u, v) if u < v else (v, u)] - completion(u, v)
                    if w > 0:
                        found.append((u, w))
            return found
        return [(u, self.weight[(u, v) if u < v else (v, u)])
                for u in self.near[v] if u not in inside]

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
