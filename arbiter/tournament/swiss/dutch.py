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
be shown to complete the round: the same result, found faster; see Matcher.upper.)
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

from arbiter.tournament.errors import NoLegalPairingError
from arbiter.tournament.swiss.criteria import Criteria
from arbiter.tournament.swiss.matcher import Matcher
from arbiter.tournament.swiss.matching import Choices, Edge


class Dutch:
    """One round's pairing, bracket by bracket; see the module's docstring. It asks
    ``criteria`` (a :class:`Criteria` it holds, not a base) who may meet and what each
    pair weighs, and tells it the bye's score once known."""

    def __init__(self, criteria: Criteria) -> None:
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
        matcher = Matcher(n)
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
        rest allows (see :meth:`Matcher.compute`). Done one by one, each would be a
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
        self, matcher: Matcher, mate: list[int] | None, s1: list[int], cur: list[int],
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

    def _brackets(self, matcher: Matcher) -> tuple[list[tuple[int, int]], int | None]:
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
