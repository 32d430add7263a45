"""The Dutch system's bracket walk: each bracket (a score group with the players moved
down to it) decided in bbpPairings' order, on one :class:`Matcher` over every player
still unpaired, so that what a bracket decides always leaves the round completable.

A bracket's decisions, one method each, in order: which moved-down players are paired
(C6-C7, :meth:`BracketWalk._pair_movers`), their opponents
(:meth:`BracketWalk._movers_opponents`), the remainder's exchanges between S1 and S2
(fewest, then smallest: :meth:`BracketWalk._remainder_matching`,
:meth:`BracketWalk._exchanges_from_s1`, :meth:`BracketWalk._exchanges_into_s1`), then
each S1 player's opponent, highest first (:meth:`BracketWalk._settle`); what is left
moves down (:meth:`BracketWalk._move_down`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from arbiter.tournament.errors import NoLegalPairingError
from arbiter.tournament.swiss.criteria import Criteria
from arbiter.tournament.swiss.matcher import Matcher
from arbiter.tournament.swiss.matching import Choices, Edge


@dataclass
class _Bracket:
    """One bracket's players as places in ``cur`` (each holds a vertex, in order): the
    moved-down players ``cur[:sgb]``, the score group ``cur[sgb:nsgb]``, then the next
    score group ``cur[nsgb:]``, whose pairs weigh in C6-C7. It is worked on, not a value."""

    cur: list[int]
    sgb: int
    nsgb: int
    sgb_v: int  # the score group's first vertex
    nsgb_v: int  # the next score group's first vertex
    group_start: int  # the next score group's first vertex, as the walk found it
    nxt: int  # the first vertex after the next score group
    base: dict[Edge, int]  # (place, place above): the pair's weight, 0 once excluded
    bits: int
    remainder: list[int] = field(default_factory=list)  # S1 then S2, as places
    rem_pairs: int = 0  # how many of the remainder are in S1

    def in_bracket(self, v: int) -> bool:
        return self.sgb_v <= v < self.nsgb_v

    def remainder_edge(self, si: int, li: int, s_rem: int) -> int:
        """The weight of a remainder pair with its exchange fields: fewest exchanges, then
        the smallest difference of the exchanged numbers."""
        w = self.base[li, si]
        if w:
            w += (((s_rem < self.rem_pairs) << (2 * self.bits)) - s_rem) << 1
        return w


class BracketWalk:
    """One round's pairs, bracket by bracket, on ``matcher`` (every pair's first weights
    set); the bye's score is already known to ``criteria``."""

    def __init__(self, criteria: Criteria, matcher: Matcher) -> None:
        self.criteria = criteria
        self.matcher = matcher
        self.matched = [False] * criteria.n
        self.pairs: list[tuple[int, int]] = []

    def run(self) -> tuple[list[tuple[int, int]], int | None]:
        """The pairs (vertices) and the bye's vertex (None: no bye)."""
        n, score = self.criteria.n, self.criteria.score
        nxt = 0
        cur: list[int] = []
        while nxt < n and score[nxt] >= score[0]:
            cur.append(nxt)
            nxt += 1
        sgb = 0  # moved-down players at the head of ``cur``
        sgb_v = 0  # first vertex of the bracket's own score group
        while len(cur) > 1 or nxt < n:
            bracket = self._open(cur, sgb, sgb_v, nxt)
            nxt = bracket.nxt
            mate = self._first_matching(bracket)
            mate = self._pair_movers(bracket, mate)
            mate = self._movers_opponents(bracket, mate)
            self._remainder(bracket, mate)
            mate, exchanges = self._remainder_matching(bracket)
            mate = self._exchanges_from_s1(bracket, mate, exchanges)
            mate = self._exchanges_into_s1(bracket, mate, exchanges)
            mate = self._s1_opponents(bracket, mate)
            self.matcher.upper = None
            cur, sgb = self._move_down(bracket, mate)
            sgb_v = bracket.nsgb_v
        bye = cur[0] if cur else None
        return self.pairs, bye

    def _open(self, cur: list[int], sgb: int, sgb_v: int, nxt: int) -> _Bracket:
        """The bracket of ``cur`` with the next score group added to it (``cur`` grows),
        and every pair's weight set in the matcher."""
        n, score = self.criteria.n, self.criteria.score
        nsgb = len(cur)
        group_start = nxt
        while nxt < n and score[nxt] >= score[group_start]:
            cur.append(nxt)
            nxt += 1
        base: dict[Edge, int] = {}
        edge = self.criteria.edge
        weights: list[tuple[int, int, int]] = []
        for li in range(sgb, len(cur)):
            lv, in_bracket, in_next = cur[li], li < nsgb, li >= nsgb
            for si in range(li):
                base[li, si] = w = edge(cur[si], lv, in_bracket, in_next)
                weights.append((lv, cur[si], w))
        self.matcher.set_many(weights)
        return _Bracket(
            cur, sgb, nsgb, sgb_v, sgb_v + (nsgb - sgb), group_start, nxt, base,
            self.criteria.size_bits,
        )

    def _first_matching(self, bracket: _Bracket) -> list[int]:
        """The bracket's first matching: over its own players alone when those below can
        be shown to complete the round (see :attr:`Matcher.upper`)."""
        criteria, cur, nxt = self.criteria, bracket.cur, bracket.nxt
        if criteria.relaxable(cur, nxt):
            check = None if criteria.separable(cur, nxt) else criteria.completes(nxt)
            self.matcher.upper = (set(cur), criteria.completion, criteria.n - 1, check)
        mate = self.matcher.compute()
        if bracket.sgb_v == 0 and not self.matcher.relaxed:
            criteria.check_complete(mate)
        return mate

    def _pair_movers(self, bracket: _Bracket, mate: list[int]) -> list[int]:
        """Which moved-down players are paired in this bracket (C6-C7), highest first."""
        score, matcher, matched = self.criteria.score, self.matcher, self.matched
        cur, sgb, nsgb, base = bracket.cur, bracket.sgb, bracket.nsgb, bracket.base
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
                    left_matched += bracket.in_bracket(mate[cur[mi]])
                    mi += 1
            if not left_matched:
                continue
            if left <= left_matched:
                matched[pv] = True
                continue
            left -= 1
            if not bracket.in_bracket(mate[pv]):
                for oi in range(sgb, nsgb):
                    w = base[oi, pi]
                    if w:
                        matcher.set(pv, cur[oi], w | 1)
                mate = matcher.compute()
            if bracket.in_bracket(mate[pv]):
                matched[pv] = True
                left_matched -= 1
                for oi in range(sgb, nsgb):
                    w = base[oi, pi]
                    if w:
                        matcher.set(pv, cur[oi], (w | (nsgb - sgb)) + 1)
        return mate

    def _movers_opponents(self, bracket: _Bracket, mate: list[int]) -> list[int]:
        """Each paired moved-down player's opponent: the highest-placed one the rest allows."""
        matcher, matched, cur, base = self.matcher, self.matched, bracket.cur, bracket.base
        for pi in range(bracket.sgb):
            pv = cur[pi]
            if not matched[pv]:
                continue
            addend = len(cur)
            for oi in range(bracket.nsgb - 1, bracket.sgb - 1, -1):
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
            self.pairs.append((pv, mv))
        return mate

    def _remainder(self, bracket: _Bracket, mate: list[int]) -> None:
        """The remainder (S1 then S2: the score group's players paired within the
        bracket) and its pairs' weights with their exchange fields."""
        cur = bracket.cur
        for pi in range(bracket.sgb, bracket.nsgb):
            pv = cur[pi]
            if mate[pv] < bracket.sgb_v:
                continue
            bracket.remainder.append(pi)
            if mate[pv] < pv:
                bracket.rem_pairs += 1
        for a, oi in enumerate(bracket.remainder):
            for b, pi in enumerate(bracket.remainder[:a]):
                if oi <= pi:
                    break
                self.matcher.set(cur[pi], cur[oi], bracket.remainder_edge(pi, oi, b))

    def _remainder_matching(self, bracket: _Bracket) -> tuple[list[int], int]:
        """The remainder's matching, with the S1 players' choice of opponents as the least
        significant part, and how many exchanges it makes: with none, this one matching
        settles the bracket."""
        cur, nsgb_v, s1 = bracket.cur, bracket.nsgb_v, bracket.remainder[: bracket.rem_pairs]
        mate = self.matcher.compute(self._s1_choice(bracket, s1, bracket.remainder))
        exchanges = 0
        for pi in s1:
            pv = cur[pi]
            exchanges += mate[pv] <= pv or mate[pv] >= nsgb_v
        if not exchanges:
            mate = self._settle(bracket, mate, s1, whole=True)
        return mate, exchanges

    def _exchanges_from_s1(self, bracket: _Bracket, mate: list[int], exchanges: int) -> list[int]:
        """Which S1 players leave S1, the lowest-placed first."""
        matcher, cur, remainder = self.matcher, bracket.cur, bracket.remainder
        todo = exchanges
        s_rem = it = bracket.rem_pairs
        while it > 0 and todo:
            opp_it = it
            s_rem -= 1
            it -= 1
            pv = cur[remainder[it]]
            if pv < mate[pv] < bracket.nsgb_v:
                for oit in range(opp_it, len(remainder)):
                    w = bracket.remainder_edge(remainder[it], remainder[oit], s_rem)
                    if w:
                        matcher.set(pv, cur[remainder[oit]], w - 1)
                mate = matcher.compute()
            exchange = mate[pv] <= pv or mate[pv] >= bracket.nsgb_v
            todo -= exchange
            for oit in range(it + 1, len(remainder)):
                if exchange:
                    bracket.base[remainder[oit], remainder[it]] = 0
                matcher.set(
                    pv,
                    cur[remainder[oit]],
                    bracket.remainder_edge(remainder[it], remainder[oit], s_rem),
                )
        return mate

    def _exchanges_into_s1(self, bracket: _Bracket, mate: list[int], exchanges: int) -> list[int]:
        """Which S2 players join S1, the highest-placed first."""
        matcher, cur, remainder, base = self.matcher, bracket.cur, bracket.remainder, bracket.base
        todo = exchanges
        r_index = bracket.rem_pairs
        for it in range(bracket.rem_pairs, len(remainder)):
            if todo <= 1:
                break
            pv = cur[remainder[it]]
            already = pv < mate[pv] < bracket.nsgb_v
            if not already:
                for oit in range(it + 1, len(remainder)):
                    w = bracket.remainder_edge(remainder[it], remainder[oit], r_index)
                    if w:
                        matcher.set(pv, cur[remainder[oit]], w + 1)
                mate = matcher.compute()
            if pv < mate[pv] < bracket.nsgb_v:
                todo -= 1
                for oit in range(it):
                    base[remainder[it], remainder[oit]] = 0
                    matcher.set(pv, cur[remainder[oit]], 0)
                for oi in range(bracket.nsgb, len(cur)):
                    base[oi, remainder[it]] = 0
                    matcher.set(pv, cur[oi], 0)
            if not already:
                for oit in range(it + 1, len(remainder)):
                    matcher.set(
                        pv,
                        cur[remainder[oit]],
                        bracket.remainder_edge(remainder[it], remainder[oit], r_index),
                    )
            r_index += 1
        return mate

    def _s1_opponents(self, bracket: _Bracket, mate: list[int]) -> list[int]:
        """S1 and S2 as the exchanges left them, then each S1 player, in order, meets the
        highest-placed opponent the rest allows."""
        cur, nsgb_v, base, remainder = bracket.cur, bracket.nsgb_v, bracket.base, bracket.remainder
        for it, pi in enumerate(remainder):
            pv = cur[pi]
            for oi in remainder[it + 1 :]:
                ov = cur[oi]
                if mate[pv] <= pv or mate[pv] >= nsgb_v or ov < mate[ov] < nsgb_v:
                    base[oi, pi] = 0
                self.matcher.set(pv, ov, base[oi, pi])
        s1 = [
            pi for pi in remainder if not self.matched[cur[pi]] and cur[pi] < mate[cur[pi]] < nsgb_v
        ]
        if s1:
            mate = self._settle(bracket, None, s1)
        return mate

    def _move_down(self, bracket: _Bracket, mate: list[int]) -> tuple[list[int], int]:
        """What is left moves down to the next bracket: its players and how many of them
        were moved down (those of this bracket, not the next score group)."""
        criteria, score, n = self.criteria, self.criteria.score, self.criteria.n
        cur, nsgb, group_start = bracket.cur, bracket.nsgb, bracket.group_start
        new_cur: list[int] = []
        new_sgb = 0
        criteria.single_downfloater_bye = (
            n % 2 == 1 and group_start < n and criteria.bye_score >= score[group_start]
        )
        for pi, pv in enumerate(cur):
            if pi < nsgb and self.matched[pv]:
                continue
            new_cur.append(pv)
            if pi < nsgb:
                new_sgb += 1
            if (
                criteria.single_downfloater_bye
                and group_start < n
                and score[mate[pv]] < score[group_start]
            ):
                criteria.single_downfloater_bye = False
        if new_cur == cur and group_start >= n:
            raise NoLegalPairingError(criteria.played + 1, "the last bracket cannot be completed")
        return new_cur, new_sgb

    def _s1_choice(self, bracket: _Bracket, s1: list[int], among: list[int]) -> Choices:
        """Addends that make each S1 player, in order, meet the highest-placed opponent the
        rest allows (see :meth:`Matcher.compute`), of the places ``among``. Done one by one,
        each would be a matching with small addends on that player's edges; together they
        are one."""
        cur, base, matched = bracket.cur, bracket.base, self.matched

        def addends_of(i: int) -> dict[Edge, int]:
            pi = s1[i]
            addends: dict[Edge, int] = {}
            for value, oi in enumerate(reversed(among), start=1):
                if oi > pi and not matched[cur[oi]] and base[oi, pi]:
                    addends[cur[pi], cur[oi]] = value
            return addends

        return len(s1), addends_of, len(among) + 1

    def _settle(
        self, bracket: _Bracket, mate: list[int] | None, s1: list[int], whole: bool = False
    ) -> list[int]:
        """Pair each player of ``s1``, in order, with the highest-placed opponent the rest
        allows; ``mate``: a matching already made with all their choices, if any.

        ``whole``: ``s1`` is the remainder's S1 and ``mate`` made no exchange. Then every
        maximum matching pairs each S1 player with an S2 player (an S1 player paired
        otherwise is an exchange, which the exchanges' field counts); when the S2 players
        it uses are the same in all of them (:func:`_s2_for`), the other players' pairs
        do not depend on S1's choices, and those are made on the S1-S2 pairs alone: a
        smaller graph, on which the fields equal on all its pairs fall away
        (matching.compress_weights), so more S1 players choose in each matching. The
        other players keep ``mate``'s pairs. (Not when the bye may go below: the next
        bracket's criteria then read those pairs as the last matching made them.)
        """
        matcher, cur, remainder = self.matcher, bracket.cur, bracket.remainder
        among, full = remainder, mate
        if whole and not _bye_below(self.criteria, bracket):
            assert full is not None
            used = _s2_for(matcher, bracket, full, s1)
            if used is not None:
                among = used
                within = ({cur[pi] for pi in s1}, {cur[oi] for oi in among}, matcher.relaxed)
        while s1:
            if mate is None:
                if among is not remainder:
                    matcher.within = within
                    # The S2 players left: fewer addends, more S1 players a matching.
                    among = [oi for oi in among if not self.matched[cur[oi]]]
                mate = matcher.compute(self._s1_choice(bracket, s1, among))
            for pi in s1[: matcher.settled]:
                pv = cur[pi]
                mv = mate[pv]
                self.matched[pv] = self.matched[mv] = True
                matcher.finalise(pv, mv)
                self.pairs.append((pv, mv))
            s1 = s1[matcher.settled :]
            if s1:
                mate = None
        assert mate is not None
        if matcher.within is not None:
            matcher.within = None
            assert full is not None
            mate = [matcher.final.get(v, m) for v, m in enumerate(full)]
        return mate


def _s2_for(
    matcher: Matcher, bracket: _Bracket, mate: list[int], s1: list[int]
) -> list[int] | None:
    """The S2 places S1's choices may be made among on the S1-S2 pairs alone (``mate``: a
    maximum matching with no exchange); None: not so. Every maximum matching pairs each
    S1 player with an S2 player. S2's others (when S2 is larger) are not paired within
    the score group in ``mate``, so in none (the bracket's pairs are as many in every
    one). Then the rest of the round is worth the same whichever S2 players S1 uses when
    each S2 player weighs the same with every player outside S1 and S2 (and may be left
    below as well as any other: :attr:`Matcher.upper` needs no check, or ``mate`` left
    none). (Else which of them S1 leaves may be a tie that S1's choices break, as in
    most brackets of later rounds: asking every maximum matching whether S1 can leave
    another costs a matching, and found one each time in the benchmark's events.)"""
    cur = bracket.cur
    s1_v = {cur[pi] for pi in s1}
    s2 = bracket.remainder[len(s1):]
    s2_v = [cur[oi] for oi in s2]
    others = [v for v in s2_v if mate[v] not in s1_v]
    if len(others) != len(s2_v) - len(s1):
        return None
    if not others:
        return s2
    if any(bracket.sgb_v <= mate[v] < bracket.nsgb_v or mate[v] == v for v in others):
        return None
    if matcher.relaxed:
        assert matcher.upper is not None
        sentinel, check = matcher.upper[2:]
        if check is not None and any(mate[v] == sentinel for v in others):
            return None
    inside = s1_v.union(s2_v)
    if len({tuple(sorted(matcher.pairs_outside(v, inside))) for v in s2_v}) == 1:
        return s2
    return None


def _bye_below(criteria: Criteria, bracket: _Bracket) -> bool:
    """Whether :meth:`BracketWalk._move_down` will read the pairs of this bracket's players."""
    group_start = bracket.group_start
    return (criteria.n % 2 == 1 and group_start < criteria.n
            and criteria.bye_score >= criteria.score[group_start])
