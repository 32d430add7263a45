"""Writing an event as TRF (see the package's docstring for the format)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from arbiter.tournament.errors import PlayerNameError, TrfError
from arbiter.tournament.model import Colour, Game, Player, check_unique, initial_colour
from arbiter.tournament.names import check_name
from arbiter.tournament.trf.event import MAX_PLAYERS, NAME_WIDTH, complete_rounds, paired

_PLAYED_CODE = {1.0: "1", 0.5: "=", 0.0: "0"}


def export_trf(
    name: str, players: Sequence[Player], games: Sequence[Game], total_rounds: int,
    initial: Colour | None = None, ranks: Mapping[str, int] | None = None,
) -> str:
    """The TRF text of an event; ``players`` in seed order (start rank 1 first).

    ``initial``: the top seed's first colour when no game shows it (none played yet).
    ``ranks``: each player's rank after the rounds written (the standings' own, with the
    event's tie-breaks); without them, by score, then start rank.
    """
    check_unique(players)
    rounds = complete_rounds(games)
    if total_rounds < rounds:
        raise TrfError(f"{rounds} rounds played, more than the {total_rounds} announced")
    if total_rounds < 1:
        raise TrfError(f"the event has {total_rounds} rounds: at least 1 is needed")
    if len(players) > MAX_PLAYERS:
        raise TrfError(f"{len(players)} players: TRF numbers at most {MAX_PLAYERS}")
    number = {p.name: i + 1 for i, p in enumerate(players)}
    entries = _entries(games, number, rounds, total_rounds)
    score = {
        p.name: sum(entries.get((p.name, r), (0, "", "", 0.0))[3] for r in range(1, rounds + 1))
        for p in players
    }
    rank = dict(ranks) if ranks is not None else {
        n: i + 1
        for i, n in enumerate(sorted(score, key=lambda n: (-score[n], number[n])))
    }
    played = [g for g in games if g.pairing.round <= rounds]
    first = initial_colour(players, played) if any(g.played or g.forfeit for g in played) else (
        initial or Colour.WHITE
    )
    lines = [
        f"012 {name}",
        f"XXR {total_rounds}",
        f"XXC {'white' if first is Colour.WHITE else 'black'}1",
    ]
    for p in players:
        head = (
            f"001 {number[p.name]:>4}      {_name_and_rating(p)}"
            f"{'':27} {score[p.name]:>4.1f} {rank[p.name]:>4}"
        )
        lines.append(head + _blocks(p, entries, rounds, total_rounds))
    return "\n".join(lines) + "\n"


#: One player's entry for one round: (opponent's start rank or 0, colour, code, points).
_Entry = tuple[int, str, str, float]


def _entries(
    games: Sequence[Game], number: dict[str, int], rounds: int, total_rounds: int
) -> dict[tuple[str, int], _Entry]:
    """Each player's entry by (name, round): the ``rounds`` complete, then the byes the
    organiser gave for the next round, once it is not yet paired."""
    entries: dict[tuple[str, int], _Entry] = {}
    ahead = rounds + 1 <= total_rounds and not any(
        g.pairing.round == rounds + 1 and paired(g) for g in games
    )
    for g in games:
        pg = g.pairing
        if pg.round > rounds and not (ahead and pg.round == rounds + 1 and pg.is_bye):
            continue
        if pg.black is None:
            entries[pg.white, pg.round] = (0, "-", g.bye.value, g.bye.points)
            continue
        sides = ((pg.white, pg.black, Colour.WHITE), (pg.black, pg.white, Colour.BLACK))
        for me, opp, side in sides:
            points = g.points(me)
            assert points is not None
            code = ("+" if points else "-") if g.forfeit else _PLAYED_CODE[points]
            entries[me, pg.round] = (number[opp], side.value.lower(), code, points)
    return entries


def _name_and_rating(p: Player) -> str:
    """Columns 15-52 of a player line; TrfError when the name or rating cannot be written."""
    if not 0 <= p.rating <= 9999:
        raise TrfError(f"{p.name!r}: rating {p.rating} does not fit TRF's four digits")
    try:
        check_name(p.name)
    except PlayerNameError as exc:
        raise TrfError(f"cannot be written to TRF: {exc}") from None
    rating = f"{p.rating:>4}" if p.rating else "    "
    return f"{p.name[:NAME_WIDTH]:<{NAME_WIDTH}} {rating}"


def _blocks(
    p: Player, entries: dict[tuple[str, int], _Entry], rounds: int, total_rounds: int
) -> str:
    """A player line's round blocks, from column 92: each complete round, then a bye given
    ahead or, for a withdrawn player, the round he will not be paired."""
    blocks = []
    for r in range(1, rounds + 1):
        number_of, colour_of, code_of, _ = entries.get((p.name, r), (0, "-", "-", 0.0))
        blocks.append(f"  {number_of:04d} {colour_of} {code_of}")
    if (p.name, rounds + 1) in entries:
        _, _, code_of, _ = entries[p.name, rounds + 1]
        blocks.append(f"  0000 - {code_of}")
    elif p.withdrawn and rounds < total_rounds:
        blocks.append("  0000 - -")
    return "".join(blocks)
