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

from arbiter.tournament.swiss.brackets import BracketWalk
from arbiter.tournament.swiss.criteria import Criteria
from arbiter.tournament.swiss.matcher import Matcher


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
        if odd:
            weights: dict[tuple[int, int], int] = {}
            order, shifts = self.criteria.order, self.criteria.group_shift
            for lo in range(n):
                for h in range(lo):
                    w = 0
                    if self.criteria.compatible(lo, h):
                        w = 1 + (not order[lo].bye_eligible) + (not order[h].bye_eligible)
                        w <<= self.criteria.groups_shift
                        w |= shifts[score[lo]] + shifts[score[h]]
                        w <<= self.criteria.size_bits
                        w |= score[lo] >= score[0]
                    weights[h, lo] = w
            matcher.set_all(weights)
        else:
            matcher.set_all(self.criteria.outside_edges())
        if not odd:
            # Completion is the weights' first field: the first bracket's matching is
            # complete exactly when some pairing keeps the absolute criteria.
            return BracketWalk(self.criteria, matcher).run()
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
            matcher.set_all(self.criteria.outside_edges())
        return BracketWalk(self.criteria, matcher).run()
