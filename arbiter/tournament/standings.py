"""Scores and standings, with the tie-breaks in the order the organiser chose.

Score: 1 a win, ½ a draw, 0 a loss, 1 a bye; a game without a result counts
nothing. Tie-breaks (each only separates players still equal on everything before it):

* Buchholz: the sum of the scores of the opponents met in games with a result.
* Sonneborn-Berger: the sum of the scores of the opponents beaten, plus half
  of those drawn with.
* Direct encounter: the points scored in the games among the players still tied.

And as FIDE defines them (Handbook C.07, Tie-Break Regulations 2023), for a
player's own unplayed rounds (Article 16): each one (the pairing-allocated
bye, a round the player was not paired in) counts for Buchholz as a game
against a dummy opponent whose score is the player's own final score; a round
the player was not paired in (absent, withdrawn, entered late) is a
voluntarily unplayed round, cut first by Cut-1:

* ``buchholz-fide`` (BH): the sum of the opponents' scores, dummy opponents included.
* ``buchholz-cut1`` (BH-C1): the same without its least significant value.
* ``wins`` (WIN): the rounds in which the player scored as much as a win, played or
  not (the bye counts).
* ``aro`` (ARO): the average rating of the opponents met in games with a result,
  rated ones only (rating above 0), rounded to the nearest whole number (½ up).

Players equal on the score and every tie-break share a rank.
"""

from __future__ import annotations

import enum
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from arbiter.tournament.model import Game, Player, check_unique


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
        self.decided: dict[str, list[Game]] = {
            n: [g for g in gs if g.result is not None and not g.pairing.is_bye]
            for n, gs in self.mine.items()
        }
        self.held = sorted({g.pairing.round for g in games})
        self.rating = {p.name: p.rating for p in players}

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

    def fide_values(self, name: str) -> list[tuple[bool, float]]:
        """(voluntarily unplayed, value) per round held: the opponent's score, or the
        player's own for a dummy opponent (C.07 Article 16)."""
        by_round = {g.pairing.round: g for g in self.mine.get(name, ())}
        out: list[tuple[bool, float]] = []
        for r in self.held:
            g = by_round.get(r)
            opp = None if g is None else g.pairing.opponent_of(name)
            if g is not None and opp is not None and g.result is not None:
                out.append((False, self.score.get(opp, 0.0)))
            else:
                # The bye is not voluntary; an unpaired round (or a game left without a
                # result) is.
                out.append((g is None or not g.pairing.is_bye, self.score[name]))
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
