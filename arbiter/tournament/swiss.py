"""Swiss pairing, a simplified Dutch system.

For the next round, of the players not withdrawn:

1. Ranking: by score, then seed order.
2. Bye (odd count): the lowest-ranked player who has not had one, such that
   the others can still be paired; nobody gets a second bye.
3. Pairing: the highest-ranked unpaired player meets, in this order of
   preference, the players of their own score group from its middle down
   (top half against bottom half: S1[i] against S2[i]), then the rest of the
   group, then the lower groups from the top; never someone already met.
   A candidate both of whose colour preferences can be met is tried first.
   Backtracking finds a pairing whenever one exists.
4. Colours: an absolute preference (colour difference beyond ±1, or the same
   colour twice in a row) is never broken when a pairing keeping all of them
   exists; otherwise the search is repeated without that rule. Between two
   players the stronger preference wins (absolute, then the larger
   difference, then the higher-ranked player); with no preference at all the
   higher-ranked player has White on odd boards.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from arbiter.tournament.errors import PairingError, UnknownPlayerError
from arbiter.tournament.model import Colour, Game, Pairing, Player, check_unique
from arbiter.tournament.standings import scores

#: How many candidate pairs the search may try before it gives up (a bound, not a tuning knob:
#: a real event is paired within a few hundred).
SEARCH_BUDGET = 200_000


@dataclass
class _History:
    """One player's past: opponents, colours in order, byes."""

    opponents: set[str] = field(default_factory=set)
    colours: list[Colour] = field(default_factory=list)
    byes: int = 0

    @property
    def difference(self) -> int:
        """Whites minus blacks."""
        return sum(1 if c is Colour.WHITE else -1 for c in self.colours)

    @property
    def absolute(self) -> bool:
        """Must have the preferred colour (difference beyond ±1 or the same twice running)."""
        recent = self.colours[-2:]
        return abs(self.difference) > 1 or (len(recent) == 2 and recent[0] is recent[1])

    @property
    def preference(self) -> Colour | None:
        if self.difference > 0:
            return Colour.BLACK
        if self.difference < 0:
            return Colour.WHITE
        return self.colours[-1].other if self.colours else None

    def strength(self) -> tuple[int, int]:
        return (1 if self.absolute else 0, abs(self.difference))


class _OutOfBudgetError(Exception):
    """Internal: the search tried SEARCH_BUDGET pairs."""


def history(games: Sequence[Game]) -> dict[str, _History]:
    """Every player's past from ``games`` (unplayed games count: the pairing was made)."""
    past: dict[str, _History] = defaultdict(_History)
    for game in games:
        p = game.pairing
        if p.black is None:
            past[p.white].byes += 1
            continue
        past[p.white].opponents.add(p.black)
        past[p.black].opponents.add(p.white)
        past[p.white].colours.append(Colour.WHITE)
        past[p.black].colours.append(Colour.BLACK)
    return past


def swiss_round(
    players: Sequence[Player], games: Sequence[Game], round_number: int
) -> list[Pairing]:
    """The pairings of ``round_number`` for ``players`` (seed order) after ``games``."""
    check_unique(players)
    known = {p.name for p in players}
    for g in games:
        for name in (g.pairing.white, g.pairing.black):
            if name is not None and name not in known:
                raise UnknownPlayerError(f"{name!r} played but is not a player")
    seed = {p.name: i for i, p in enumerate(players)}
    active = [p.name for p in players if not p.withdrawn]
    if len(active) < 2:
        raise PairingError("a round needs two players or more")
    score = scores(games)
    past = history(games)
    order = sorted(active, key=lambda n: (-score.get(n, 0.0), seed[n]))
    search = _Search(order, score, past)
    for strict in (True, False):
        try:
            found = search.run(strict)
        except _OutOfBudgetError:
            raise PairingError(f"no pairing found within {SEARCH_BUDGET} tries") from None
        if found is not None:
            pairs, bye = found
            return _boards(pairs, bye, order, past, round_number)
    raise PairingError("no pairing without a repeated game or a second bye")


class _Search:
    def __init__(self, order: list[str], score: dict[str, float], past: dict[str, _History]):
        self.order = order
        self.score = score
        self.past = past
        self.tries = 0

    def run(self, strict: bool) -> tuple[list[tuple[str, str]], str | None] | None:
        if len(self.order) % 2 == 0:
            pairs = self._match(self.order, strict)
            return None if pairs is None else (pairs, None)
        for bye in reversed(self.order):
            if self.past[bye].byes:
                continue
            pairs = self._match([n for n in self.order if n != bye], strict)
            if pairs is not None:
                return pairs, bye
        return None

    def _compatible(self, a: str, b: str) -> bool:
        ha, hb = self.past[a], self.past[b]
        return not (ha.absolute and hb.absolute and ha.preference is hb.preference)

    def _happy(self, a: str, b: str) -> bool:
        pa, pb = self.past[a].preference, self.past[b].preference
        return pa is None or pb is None or pa is not pb

    def _candidates(self, first: str, others: list[str]) -> list[str]:
        own = [n for n in others if self.score.get(n, 0.0) == self.score.get(first, 0.0)]
        half = (len(own) + 1) // 2  # ``first`` is S1[0]; S2 starts at own[half - 1]
        s2_first = max(half - 1, 0)
        in_group = own[s2_first:] + own[:s2_first][::-1]
        in_group.sort(key=lambda n: not self._happy(first, n))  # stable: keeps the order
        group = set(own)
        lower = [n for n in others if n not in group]
        return in_group + lower

    def _match(self, order: list[str], strict: bool) -> list[tuple[str, str]] | None:
        if not order:
            return []
        first, others = order[0], order[1:]
        for other in self._candidates(first, others):
            self.tries += 1
            if self.tries > SEARCH_BUDGET:
                raise _OutOfBudgetError
            if other in self.past[first].opponents:
                continue
            if strict and not self._compatible(first, other):
                continue
            rest = self._match([n for n in others if n != other], strict)
            if rest is not None:
                return [(first, other), *rest]
        return None


def _boards(
    pairs: list[tuple[str, str]],
    bye: str | None,
    order: list[str],
    past: dict[str, _History],
    round_number: int,
) -> list[Pairing]:
    rank = {n: i for i, n in enumerate(order)}
    pairs = sorted(pairs, key=lambda ab: min(rank[ab[0]], rank[ab[1]]))
    out: list[Pairing] = []
    for board, (a, b) in enumerate(pairs, start=1):
        high, low = (a, b) if rank[a] < rank[b] else (b, a)
        white, black = _colours(high, low, past, board)
        out.append(Pairing(round_number, board, white, black))
    if bye is not None:
        out.append(Pairing(round_number, len(out) + 1, bye, None))
    return out


def _colours(high: str, low: str, past: dict[str, _History], board: int) -> tuple[str, str]:
    """(white, black) for two players, ``high`` ranked higher."""
    hh, hl = past[high], past[low]
    ph, pl = hh.preference, hl.preference
    if ph is None and pl is None:
        return (high, low) if board % 2 == 1 else (low, high)
    if ph is None or pl is None or ph is not pl:
        if ph is not None:
            return (high, low) if ph is Colour.WHITE else (low, high)
        return (low, high) if pl is Colour.WHITE else (high, low)
    winner = low if hl.strength() > hh.strength() else high
    loser = high if winner == low else low
    return (winner, loser) if ph is Colour.WHITE else (loser, winner)
