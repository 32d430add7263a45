"""Scores and standings, with the tie-breaks in the order the organiser chose.

Score: 1 a win, ½ a draw, 0 a loss; a forfeit 1 to the side who came, 0 to the side
who did not (both 0 when neither came); a bye its points (the pairing-allocated and
full-point 1, half-point ½, zero-point 0); a game without a result counts nothing.
Tie-breaks (each only separates players still equal on everything before it):

* Buchholz: the sum of the scores of the opponents met over the board in games with a
  result (a forfeit or a bye adds nothing).
* Sonneborn-Berger: the sum of the scores of the opponents beaten over the board, plus
  half of those drawn with.
* Direct encounter: the points scored over the board in the games among the players
  still tied.

And as FIDE defines them (Handbook C.07, Tie-Break Regulations, Articles 15-16 as in
force from 1 March 2026). An unplayed round is one in which the player played no game
(a forfeit either way, a bye of any kind, a round not paired in: absent, withdrawn,
entered late, which counts as a zero-point bye). A voluntarily unplayed round (VUR) is
a requested bye (half- or zero-point, or a round not paired in) or a forfeit loss.

* For an opponent's score (16.3), each unplayed round counts the points it gave, except
  a requested bye followed only by VURs (or in the last round): a draw.
* For the player's own (16.4), each unplayed round is a game against a dummy whose score
  is the player's own, but at most the scheduled opponent's adjusted score for a forfeit,
  and at most half a point a round (the rounds held) for the others.

* ``buchholz-fide`` (BH): the sum of the opponents' adjusted scores, dummies included.
* ``buchholz-cut1`` (BH-C1): the same without its least significant value; with a VUR,
  the lowest value of a VUR is cut (16.5).
* ``wins`` (WIN): the rounds in which the player scored as much as a win, played or
  not (the forfeit won, the pairing-allocated and full-point byes count).
* ``aro`` (ARO): the average rating of the opponents met over the board in games with a
  result, rated ones only (rating above 0), rounded to the nearest whole number (½ up).

Players equal on the score and every tie-break share a rank.
"""

from __future__ import annotations

import enum
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from arbiter.tournament.model import Bye, Game, Player, check_unique


class TieBreak(enum.Enum):
    """A tie-break, by the name the config and the exports use."""

    BUCHHOLZ = "buchholz"
    SONNEBORN_BERGER = "sonneborn-berger"
    DIRECT_ENCOUNTER = "direct-encounter"
    BUCHHOLZ_FIDE = "buchholz-fide"
    BUCHHOLZ_CUT1 = "buchholz-cut1"
    WINS = "wins"
    ARO = "aro"


DEFAULT_TIEBREAKS = (TieBreak.DIRECT_ENCOUNTER, TieBreak.BUCHHOLZ, TieBreak.SONNEBORN_BERGER)


@dataclass(frozen=True)
class Standing:
    """One line of the standings; ``tiebreaks`` follow the order asked for."""

    rank: int
    name: str
    score: float
    played: int
    wins: int
    draws: int
    losses: int
    byes: int
    tiebreaks: tuple[tuple[TieBreak, float], ...]


def scores(games: Iterable[Game]) -> dict[str, float]:
    """Each player's score over ``games`` (only players who appear in them)."""
    total: dict[str, float] = defaultdict(float)
    for game in games:
        for name in (game.pairing.white, game.pairing.black):
            if name is None:
                continue
            points = game.points(name)
            total[name] += points if points is not None else 0.0
    return dict(total)


class _Record:
    """What the tie-breaks read, indexed once: each player's score, games and rating.

    Every tie-break is a method ``(name, group) -> value``; ``group`` is the set of
    players still tied (only the direct encounter reads it).
    """

    def __init__(self, players: Sequence[Player], games: Sequence[Game]) -> None:
        self.score = {p.name: 0.0 for p in players}
        self.score.update((n, s) for n, s in scores(games).items() if n in self.score)
        self.mine: dict[str, list[Game]] = defaultdict(list)
        for g in games:
            for name in (g.pairing.white, g.pairing.black):
                if name is not None:
                    self.mine[name].append(g)
        # Met over the board, with a result: what the non-FIDE tie-breaks and ARO read.
        self.decided: dict[str, list[Game]] = {
            n: [g for g in gs if g.result is not None and g.played]
            for n, gs in self.mine.items()
        }
        self.rounds = max((g.pairing.round for g in games), default=0)
        self.rating = {p.name: p.rating for p in players}
        self.adjusted = {p.name: self._adjusted(p.name) for p in players}

    def rule(self, tiebreak: TieBreak) -> Callable[[str, frozenset[str]], float]:
        """The method that computes ``tiebreak``."""
        rules: dict[TieBreak, Callable[[str, frozenset[str]], float]] = {
            TieBreak.BUCHHOLZ: self.buchholz,
            TieBreak.SONNEBORN_BERGER: self.sonneborn_berger,
            TieBreak.DIRECT_ENCOUNTER: self.direct,
            TieBreak.BUCHHOLZ_FIDE: self.buchholz_fide,
            TieBreak.BUCHHOLZ_CUT1: self.buchholz_cut1,
            TieBreak.WINS: self.wins,
            TieBreak.ARO: self.aro,
        }
        return rules[tiebreak]

    def buchholz(self, name: str, _group: frozenset[str]) -> float:
        return sum(
            (
                self.score.get(opp, 0.0)
                for g in self.decided.get(name, ())
                if (opp := g.pairing.opponent_of(name)) is not None
            ),
            0.0,
        )

    def sonneborn_berger(self, name: str, _group: frozenset[str]) -> float:
        total = 0.0
        for g in self.decided.get(name, ()):
            opp = g.pairing.opponent_of(name)
            points = g.points(name)
            if opp is not None and points is not None:
                total += points * self.score.get(opp, 0.0)
        return total

    def direct(self, name: str, group: frozenset[str]) -> float:
        total = 0.0
        for g in self.decided.get(name, ()):
            opp = g.pairing.opponent_of(name)
            points = g.points(name)
            if opp is not None and opp in group and points is not None:
                total += points
        return total

    def _rounds_of(self, name: str) -> list[tuple[Game | None, bool]]:
        """(game or None when not paired, voluntarily unplayed) for each round held."""
        by_round = {g.pairing.round: g for g in self.mine.get(name, ())}
        out: list[tuple[Game | None, bool]] = []
        for r in range(1, self.rounds + 1):
            g = by_round.get(r)
            if g is None:
                vur = True  # not paired: a zero-point bye (absent, withdrawn, late)
            elif g.pairing.is_bye:
                vur = g.bye in (Bye.HALF, Bye.ZERO)
            elif g.forfeit:
                vur = g.points(name) == 0.0  # the forfeit lost (or neither came)
            else:
                vur = g.result is None  # a game still without a result: not yet played
            out.append((g, vur))
        return out

    def _adjusted(self, name: str) -> float:
        """``name``'s score as the opponents' tie-breaks read it (C.07 16.3): a requested
        bye followed only by VURs (or in the last round) is a draw."""
        rounds = self._rounds_of(name)
        last_available = max((i for i, (_, vur) in enumerate(rounds) if not vur), default=-1)
        total = 0.0
        for i, (g, vur) in enumerate(rounds):
            requested = vur and (g is None or g.pairing.is_bye)
            if requested and i > last_available:
                total += 0.5
            elif g is not None:
                total += g.points(name) or 0.0
        return total

    def fide_values(self, name: str) -> list[tuple[bool, float]]:
        """(voluntarily unplayed, value) per round held: the opponent's adjusted score for
        a game played, else the dummy's (C.07 16.4)."""
        own = self.score[name]
        out: list[tuple[bool, float]] = []
        for g, vur in self._rounds_of(name):
            opp = None if g is None else g.pairing.opponent_of(name)
            if g is not None and opp is not None and g.played and g.result is not None:
                out.append((False, self.adjusted.get(opp, 0.0)))
            elif g is not None and opp is not None and g.forfeit:
                out.append((vur, min(own, self.adjusted.get(opp, 0.0))))
            else:
                out.append((vur, min(own, 0.5 * self.rounds)))
        return out

    def buchholz_fide(self, name: str, _group: frozenset[str]) -> float:
        return sum((v for _, v in self.fide_values(name)), 0.0)

    def buchholz_cut1(self, name: str, _group: frozenset[str]) -> float:
        values = self.fide_values(name)
        if not values:
            return 0.0
        # The least significant value: a voluntarily unplayed round's first, else the lowest.
        cut = min(range(len(values)), key=lambda i: (not values[i][0], values[i][1]))
        return sum((v for i, (_, v) in enumerate(values) if i != cut), 0.0)

    def wins(self, name: str, _group: frozenset[str]) -> float:
        return float(sum(1 for g in self.mine.get(name, ()) if g.points(name) == 1.0))

    def aro(self, name: str, _group: frozenset[str]) -> float:
        rated = [
            self.rating[opp]
            for g in self.decided.get(name, ())
            if (opp := g.pairing.opponent_of(name)) is not None
            and self.rating.get(opp, 0) > 0
        ]
        if not rated:
            return 0.0
        # Round half up, in whole numbers (no float rounding to even).
        return float((2 * sum(rated) + len(rated)) // (2 * len(rated)))


def standings(
    players: Sequence[Player],
    games: Sequence[Game],
    tiebreaks: Sequence[TieBreak] = DEFAULT_TIEBREAKS,
) -> list[Standing]:
    """The standings of ``players`` (in seed order: it orders the remaining ties)."""
    check_unique(players)
    record = _Record(players, games)
    values: dict[str, dict[TieBreak, float]] = {p.name: {} for p in players}
    groups = _split([p.name for p in players], lambda n, _g: record.score[n])
    for tiebreak in tiebreaks:
        rule = record.rule(tiebreak)

        def value(name: str, group: frozenset[str], tiebreak: TieBreak = tiebreak,
                  rule: Callable[[str, frozenset[str]], float] = rule) -> float:
            v = rule(name, group)
            values[name][tiebreak] = v
            return v

        groups = [part for group in groups for part in _split(group, value)]
    return _rows(groups, record.score, record.mine, tiebreaks, values)


def _split(names: list[str], key: Callable[[str, frozenset[str]], float]) -> list[list[str]]:
    """``names`` sorted by ``key`` (highest first, stable), cut where the key changes."""
    group = frozenset(names)
    keyed = sorted(
        ((key(n, group), i, n) for i, n in enumerate(names)), key=lambda t: (-t[0], t[1])
    )
    parts: list[list[str]] = []
    last: float | None = None
    for k, _, n in keyed:
        if last is None or k != last:
            parts.append([])
            last = k
        parts[-1].append(n)
    return parts


def _rows(
    groups: list[list[str]],
    score: dict[str, float],
    mine: dict[str, list[Game]],
    tiebreaks: Sequence[TieBreak],
    values: dict[str, dict[TieBreak, float]],
) -> list[Standing]:
    rows: list[Standing] = []
    for group in groups:
        rank = len(rows) + 1
        for name in group:
            theirs = mine.get(name, [])
            byes = sum(1 for g in theirs if g.pairing.is_bye)
            points = [
                p for g in theirs if not g.pairing.is_bye and (p := g.points(name)) is not None
            ]
            rows.append(
                Standing(
                    rank=rank,
                    name=name,
                    score=score[name],
                    played=len(points),
                    wins=points.count(1.0),
                    draws=points.count(0.5),
                    losses=points.count(0.0),
                    byes=byes,
                    tiebreaks=tuple((t, values[name].get(t, 0.0)) for t in tiebreaks),
                )
            )
    return rows
