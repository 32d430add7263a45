"""Reading TRF: the header and player lines, then each round's blocks checked from
both sides (see the package's docstring for what is read and what is refused)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from arbiter.tournament.errors import PlayerNameError, TrfError
from arbiter.tournament.model import (
    Bye,
    Colour,
    Game,
    Pairing,
    Player,
    Result,
    check_unique,
    initial_colour,
)
from arbiter.tournament.names import check_name
from arbiter.tournament.trf.event import MAX_FILE_BYTES, MAX_PLAYERS, MAX_ROUNDS, TrfEvent

_LINE_END = re.compile(r"\r\n|\r|\n")

#: One round of one player line: (opponent's start rank or 0, colour, result code).
_Block = tuple[int, str, str]

_RESULTS = "10=+-UFHZWDL "
#: What the opponent's block must say of the same game.
_BACK = {"1": "0", "0": "1", "=": "=", "W": "L", "L": "W", "D": "D", "+": "-", "-": "+-"}


@dataclass(frozen=True)
class _Read:
    """A TRF text's lines as read: the header's fields and the player lines by start rank."""

    name: str
    total: int | None  # XXR; None: not given
    initial: Colour | None  # XXC; None: not given
    rows: dict[int, tuple[str, int, list[_Block]]]  # start rank: (name, rating, blocks)
    line_of: dict[int, int]  # start rank: its line number


def read_trf_file(path: Path) -> str:
    """The text of the TRF file at ``path`` (UTF-8, a byte order mark dropped), never more
    than MAX_FILE_BYTES read; TrfError (naming the file) for one bigger, unreadable or not
    UTF-8."""
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise TrfError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise TrfError(f"{path}: {_too_big()}")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TrfError(f"{path}: not UTF-8 text (byte {exc.start + 1})") from None


def _too_big() -> str:
    return (f"more than {MAX_FILE_BYTES // (1024 * 1024)} MB, far more than a TRF file of"
            f" {MAX_PLAYERS} players holds: not read")


def import_trf(text: str) -> TrfEvent:
    """The event in a TRF text; TrfError names the bad line."""
    # Characters, not bytes: at most 4 bytes each, so still bounded.
    if len(text) > MAX_FILE_BYTES:
        raise TrfError(f"the TRF text is {_too_big()}")
    read = _read(text)
    rows, line_of = read.rows, read.line_of
    # The rounds paired: the last in which someone met an opponent or had the
    # pairing-allocated bye; a round after it holds only the byes given ahead of it.
    played = 0
    for _, _, blocks in rows.values():
        for r, (opp, _, code) in enumerate(blocks, start=1):
            if opp or code in "U+":
                played = max(played, r)
    total = read.total
    if total is not None and total < played:
        raise TrfError(f"XXR {total}, but {played} rounds were paired")
    players: list[Player] = []
    for rank in sorted(rows):
        pname, rating, blocks = rows[rank]
        if len(blocks) > played + 1 and any(b != (0, " ", " ") for b in blocks[played + 1 :]):
            raise TrfError(f"line {line_of[rank]}: results after round {played + 1}")
        withdrawn = len(blocks) > played and blocks[played][2] == "-"
        players.append(Player(pname, rating, withdrawn))
    check_unique(players)
    games: list[Game] = []
    for r in range(1, played + 2):
        games += _round_games(read, r, played)
    ahead = any(g.pairing.round == played + 1 for g in games)
    announced = total is not None
    if total is None:
        total = max(1, played + ahead)
    elif ahead and total < played + 1:
        raise TrfError(f"XXR {total}, but byes are given for round {played + 1}")
    event_initial = read.initial if read.initial is not None else Colour.WHITE
    if any(g.pairing.black is not None for g in games):
        event_initial = initial_colour(players, games)
    return TrfEvent(read.name, tuple(players), tuple(games), total, event_initial, announced)


def _read(text: str) -> _Read:
    """The header lines (012, XXR or 142, XXC) and the player lines (001) of ``text``;
    other lines are left out."""
    name = ""
    total: int | None = None
    initial: Colour | None = None
    rows: dict[int, tuple[str, int, list[_Block]]] = {}
    line_of: dict[int, int] = {}
    for line_no, raw in enumerate(_lines(text), start=1):
        line = raw.rstrip(" ")
        code = line[:3]
        if code == "012":
            name = line[4:].strip()
        elif code in ("XXR", "142"):
            try:
                total = int(line[3:].strip())
            except ValueError:
                raise TrfError(f"line {line_no}: the number of rounds is not a number") from None
            if not 1 <= total <= MAX_ROUNDS:
                raise TrfError(f"line {line_no}: XXR {total}: an event has from 1 to"
                               f" {MAX_ROUNDS} rounds")
        elif code == "XXC":
            words = line[3:].split()
            if "black1" in words:
                initial = Colour.BLACK
            elif "white1" in words:
                initial = Colour.WHITE
        elif code == "001":
            row = _player_line(line, line_no)
            rank = _start_rank(line, line_no)
            if rank in rows:
                raise TrfError(
                    f"line {line_no}: start rank {rank} again (first on line {line_of[rank]})"
                )
            if len(rows) == MAX_PLAYERS:
                raise TrfError(f"line {line_no}: more than {MAX_PLAYERS} players")
            rows[rank] = row
            line_of[rank] = line_no
    if not rows:
        raise TrfError("no player line (001)")
    if sorted(rows) != list(range(1, len(rows) + 1)):
        raise TrfError("the start ranks are not 1 to the number of players")
    return _Read(name, total, initial, rows, line_of)


def _round_games(read: _Read, r: int, played: int) -> list[Game]:
    """Round ``r``'s games from its blocks on every player line, each game checked from
    both sides: the boards by White's start rank, then the byes."""
    rows, line_of = read.rows, read.line_of
    boards: list[tuple[int, Game]] = []
    byes: list[Game] = []
    for rank in sorted(rows):
        blocks = rows[rank][2]
        if r > len(blocks):
            continue
        opp, colour, code = blocks[r - 1]
        if opp == 0:
            bye = _bye(code, r > played)
            if bye is not None:
                byes.append(Game(Pairing(r, 0, rows[rank][0], None), bye=bye))
            continue
        if r > played:
            raise TrfError(f"line {line_of[rank]}: a game in round {r}, after the pairings")
        if opp not in rows:
            raise TrfError(f"line {line_of[rank]}: round {r}: no player {opp}")
        other = rows[opp][2]
        back = other[r - 1] if r <= len(other) else None
        if (
            back is None
            or back[0] != rank
            or back[2] not in _BACK[code]
            or (colour != "-" and back[1] == colour)
        ):
            raise TrfError(f"round {r}: players {rank} and {opp} disagree about their game")
        if colour == "b" or (colour == "-" and rank > opp):
            continue  # read from White's side (without colours: the higher seed's)
        boards.append((rank, _game(r, rows[rank][0], rows[opp][0], code, back[2])))
    numbered = [
        Game(Pairing(r, b, g.pairing.white, g.pairing.black), g.result, g.forfeit)
        for b, (_, g) in enumerate(sorted(boards, key=lambda t: t[0]), start=1)
    ]
    numbered += [
        Game(Pairing(r, len(numbered) + i, g.pairing.white, None), bye=g.bye)
        for i, g in enumerate(byes, start=1)
    ]
    return numbered


def _lines(text: str) -> Iterator[str]:
    """The lines of ``text`` one by one (a list of them all would double a big file)."""
    start = 0
    for end in _LINE_END.finditer(text):
        yield text[start : end.start()]
        start = end.end()
    yield text[start:]


def _bye(code: str, ahead: bool) -> Bye | None:
    """The bye a block without an opponent stands for (None: the player was absent)."""
    if code == "U" and not ahead:
        return Bye.PAIRING
    if code in "F+":
        return Bye.FULL
    if code in "H=":
        return Bye.HALF
    if code == "Z":
        return Bye.ZERO
    return None


def _game(r: int, white: str, black: str, code: str, back: str) -> Game:
    """The game of ``white`` (whose block says ``code``) and ``black`` (``back``)."""
    pairing = Pairing(r, 0, white, black)
    if code in "+-":
        if code == "+":
            return Game(pairing, Result.WHITE_WIN, forfeit=True)
        return Game(pairing, Result.BLACK_WIN if back == "+" else None, forfeit=True)
    result = {"1": Result.WHITE_WIN, "W": Result.WHITE_WIN, "0": Result.BLACK_WIN,
              "L": Result.BLACK_WIN, "=": Result.DRAW, "D": Result.DRAW}[code]
    return Game(pairing, result)


def _start_rank(line: str, line_no: int) -> int:
    try:
        return int(line[4:8])
    except ValueError:
        raise TrfError(f"line {line_no}: no start rank in columns 5-8") from None


def _player_line(line: str, line_no: int) -> tuple[str, int, list[_Block]]:
    if len(line) < 84:
        raise TrfError(f"line {line_no}: a player line has at least 84 characters")
    if line[47] != " ":  # column 48 separates the name from the rating
        raise TrfError(f"line {line_no}: the name runs past column 47 (TRF's name field"
                       f" is 33 characters)")
    try:
        name = check_name(line[14:47])
    except PlayerNameError as exc:
        raise TrfError(f"line {line_no}: {exc}") from None
    raw_rating = line[48:52].strip()
    try:
        rating = int(raw_rating) if raw_rating else 0
    except ValueError:
        raise TrfError(f"line {line_no}: rating {raw_rating!r} is not a number") from None
    blocks: list[_Block] = []
    for start in range(91, len(line), 10):
        block = line[start : start + 8].ljust(8)
        round_no = len(blocks) + 1
        try:
            opp = int(block[0:4]) if block[0:4].strip() else 0
        except ValueError:
            raise TrfError(f"line {line_no}: opponent {block[0:4]!r} is not a number") from None
        colour, code = block[5], block[7].upper()
        if colour not in "wb- " or code not in _RESULTS:
            raise TrfError(
                f"line {line_no}: round {round_no}: {block!r} is not a result this hub"
                " knows (1, 0, =, +, -, U, F, H, Z, W, D, L)"
            )
        if opp == 0 and colour in "wb":
            raise TrfError(f"line {line_no}: round {round_no}: colour without opponent")
        if opp and code in "UFHZ ":
            raise TrfError(f"line {line_no}: round {round_no}: {code!r} with an opponent")
        if opp and code not in "+-" and colour not in "wb":
            raise TrfError(f"line {line_no}: round {round_no}: a game without a colour")
        blocks.append((opp, colour, code))
    while blocks and blocks[-1] == (0, " ", " "):
        blocks.pop()
    return name, rating, blocks
