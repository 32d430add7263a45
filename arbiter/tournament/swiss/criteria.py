"""The criteria (C1-C21) of the Dutch system: who may meet, and the weight of each pair."""

from __future__ import annotations

from collections.abc import Callable

from arbiter.tournament.errors import NoLegalPairingError
from arbiter.tournament.swiss.entrants import Entrant, Float
from arbiter.tournament.swiss.matching import perfect_matching_found


class Criteria:
    """A round's players as the criteria see them: who may meet (C1-C3), the weight of
    each pair (C4-C21), the bye's score, and whether a bracket may be matched alone."""

    def __init__(
        self,
        people: list[Entrant],
        active: list[Entrant],
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

    def _colour_fields(self, w: int, low: Entrant, high: Entrant, in_bracket: bool) -> int:
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

    def outside_edges(self) -> dict[tuple[int, int], int]:
        """Every allowed pair's weight outside any bracket, ``edge(h, lo, False, False)``
        keyed (h, lo): then only completion and C2 (and C9, when it applies) are set, so
        they are made here at once, not field by field."""
        n = self.n
        weights: dict[tuple[int, int], int] = {}
        if self.single_downfloater_bye:
            for lo in range(n):
                for h in range(lo):
                    w = self.edge(h, lo, False, False)
                    if w:
                        weights[h, lo] = w
            return weights
        shift, incompatible = self.low_shift, self._incompatible()  # kept for later checks
        top = [(1 + (not self.bye_candidate(v))) << shift for v in range(n)]
        extra = [((not self.bye_candidate(v)) << shift) for v in range(n)]
        for lo in range(n):
            low, away = extra[lo], incompatible[lo]
            weights.update(((h, lo), top[h] + low) for h in range(lo) if h not in away)
        return weights

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
                if perfect_matching_found(near):
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
        the bracket's matchings (then :class:`Matcher` may leave them out)."""
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
            return perfect_matching_found(near)

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
