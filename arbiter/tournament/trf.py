"""FIDE Tournament Report File (TRF-16) with the TRF(x) lines the pairing engines read.

Written: ``012`` the event's name, ``XXR`` the number of rounds, ``XXC white1``
(the initial colour), then one ``001`` line per player in seed order (the
start rank is the pairing number): start rank (columns 5-8), name (15-47),
rating (49-52), points (81-84), rank (86-89), and from column 92 one
10-character block a round: the opponent's start rank (``0000`` without one),
the colour (``w``, ``b``, ``-``) and the result (``1``, ``=``, ``0``; ``U`` the
pairing-allocated bye; ``-`` with ``0000`` a round the player was not paired,
and after the last round a withdrawn player). Only rounds whose every game has
a result are written: the file is what an endorsed engine pairs the next round from.
Names are cut to the field's 33 characters; ratings must fit its four digits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from arbiter.tournament.errors import TrfError
from arbiter.tournament.model import Colour, Game, Pairing, Player, Result, check_unique

NAME_WIDTH = 33


@dataclass(frozen=True)
class TrfEvent:
    """What a TRF file holds: players in start-rank order, the games, the number of rounds."""

    name: str
    players: tuple[Player, ...]
    games: tuple[Game, ...]
    total_rounds: int


def complete_rounds(games: Sequence[Game]) -> int:
    """The number of leading rounds in which every game has a result."""
    by_round: dict[int, list[Game]] = {}
    for g in games:
        by_round.setdefault(g.pairing.round, []).append(g)
    done = 0
    while done + 1 in by_round and all(
        g.pairing.is_bye or g.result is not None for g in by_round[done + 1]
    ):
        done += 1
    return done


def export_trf(
    name: str, players: Sequence[Player], games: Sequence[Game], total_rounds: int
) -> str:
    """The TRF text of an event; ``players`` in seed order (start rank 1 first)."""
    check_unique(players)
    rounds = complete_rounds(games)
    if total_rounds < rounds:
        raise TrfError(f"{rounds} rounds played, more than the {total_rounds} announced")
    number = {p.name: i + 1 for i, p in enumerate(players)}
    entries: dict[tuple[str, int], tuple[int, str, str, float]] = {}
    for g in games:
        pg = g.pairing
        if pg.round > rounds:
            continue
        if pg.black is None:
            entries[pg.white, pg.round] = (0, "-", "U", 1.0)
            continue
        assert g.result is not None
        sides = ((pg.white, pg.black, Colour.WHITE), (pg.black, pg.white, Colour.BLACK))
        for me, opp, side in sides:
            points = g.result.points(side)
            result_code = {1.0: "1", 0.5: "=", 0.0: "0"}[points]
            entries[me, pg.round] = (number[opp], side.value.lower(), result_code, points)
    score = {
        p.name: sum(entries.get((p.name, r), (0, "", "", 0.0))[3] for r in range(1, rounds + 1))
        for p in players
    }
    rank = {
        n: i + 1
        for i, n in enumerate(sorted(score, key=lambda n: (-score[n], number[n])))
    }
    lines = [f"012 {name}", f"XXR {total_rounds}", "XXC white1"]
    for p in players:
        if not 0 <= p.rating <= 9999:
            raise TrfError(f"{p.name!r}: rating {p.rating} does not fit TRF's four digits")
        rating = f"{p.rating:>4}" if p.rating else "    "
        head = (
            f"001 {number[p.name]:>4}      {p.name[:NAME_WIDTH]:<{NAME_WIDTH}} {rating}"
            f"{'':27} {score[p.name]:>4.1f} {rank[p.name]:>4}"
        )
        blocks = []
        for r in range(1, rounds + 1):
            number_of, colour_of, code_of, _ = entries.get((p.name, r), (0, "-", "-", 0.0))
            blocks.append(f"  {number_of:04d} {colour_of} {code_of}")
        if p.withdrawn and rounds < total_rounds:
            blocks.append("  0000 - -")
        lines.append(head + "".join(blocks))
    return "\n".join(lines) + "\n"


def import_trf(text: str) -> TrfEvent:
    """The event in a TRF text; TrfError names the bad line."""
    name = ""
    total: int | None = None
    rows: dict[int, tuple[str, int, list[tuple[int, str, str]]]] = {}
    for line_no, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        code = line[:3]
        if code == "012":
            name = line[4:].strip()
        elif code in ("XXR", "142"):
            try:
                total = int(line[3:].strip())
            except ValueError:
                raise TrfError(f"line {line_no}: the number of rounds is not a number") from None
        elif code == "001":
            rows[_start_rank(line, line_no)] = _player_line(line, line_no)
    if not rows:
        raise TrfError("no player line (001)")
    if sorted(rows) != list(range(1, len(rows) + 1)):
        raise TrfError("the start ranks are not 1 to the number of players")
    names = {rank: row[0] for rank, row in rows.items()}
    played = 0
    for _, _, blocks in rows.values():
        for r, (opp, _, _) in enumerate(blocks, start=1):
            if opp or blocks[r - 1][2] != "-":
                played = max(played, r)
    players: list[Player] = []
    games: list[Game] = []
    for rank in sorted(rows):
        pname, rating, blocks = rows[rank]
        withdrawn = len(blocks) > played and blocks[played] == (0, "-", "-")
        players.append(Player(pname, rating, withdrawn))
    check_unique(players)
    for r in range(1, played + 1):
        boards: list[tuple[int, Pairing, Result | None]] = []
        byes: list[str] = []
        for rank in sorted(rows):
            blocks = rows[rank][2]
            if r > len(blocks):
                continue
            opp, colour, code = blocks[r - 1]
            if opp == 0:
                if code == "U":
                    byes.append(names[rank])
                elif code != "-":
                    raise TrfError(f"player {rank} round {r}: result {code!r} without an opponent")
                continue
            if opp not in rows:
                raise TrfError(f"player {rank} round {r}: no player {opp}")
            other = rows[opp][2]
            back = other[r - 1] if r <= len(other) else None
            expect = {"1": "0", "0": "1", "=": "="}.get(code)
            if back is None or back[0] != rank or back[1] == colour or back[2] != expect:
                raise TrfError(f"round {r}: players {rank} and {opp} disagree about their game")
            if colour != "w":
                continue
            result = {"1": Result.WHITE_WIN, "0": Result.BLACK_WIN, "=": Result.DRAW}[code]
            boards.append((rank, Pairing(r, 0, names[rank], names[opp]), result))
        numbered = [
            Game(Pairing(r, b, p.white, p.black), res)
            for b, (_, p, res) in enumerate(sorted(boards, key=lambda t: t[0]), start=1)
        ]
        numbered += [
            Game(Pairing(r, len(numbered) + i, n, None)) for i, n in enumerate(byes, start=1)
        ]
        games += numbered
    return TrfEvent(name, tuple(players), tuple(games), total if total is not None else played)


def _start_rank(line: str, line_no: int) -> int:
    try:
        return int(line[4:8])
    except ValueError:
        raise TrfError(f"line {line_no}: no start rank in columns 5-8") from None


def _player_line(line: str, line_no: int) -> tuple[str, int, list[tuple[int, str, str]]]:
    if len(line) < 84:
        raise TrfError(f"line {line_no}: a player line has at least 84 characters")
    name = line[14:47].strip()
    if not name:
        raise TrfError(f"line {line_no}: no name in columns 15-47")
    raw_rating = line[48:52].strip()
    try:
        rating = int(raw_rating) if raw_rating else 0
    except ValueError:
        raise TrfError(f"line {line_no}: rating {raw_rating!r} is not a number") from None
    blocks: list[tuple[int, str, str]] = []
    for start in range(91, len(line), 10):
        block = line[start : start + 8].ljust(8)
        try:
            opp = int(block[0:4]) if block[0:4].strip() else 0
        except ValueError:
            raise TrfError(f"line {line_no}: opponent {block[0:4]!r} is not a number") from None
        colour, code = block[5], block[7].upper()
        if colour not in "wb-" or code not in "10=U-":
            raise TrfError(
                f"line {line_no}: round {len(blocks) + 1}: {block!r} is not a result this hub"
                " knows (1, 0, =, U, -)"
            )
        if (opp == 0) != (colour == "-"):
            raise TrfError(f"line {line_no}: round {len(blocks) + 1}: colour without opponent")
        blocks.append((opp, colour, code))
    return name, rating, blocks
