"""The published notched-key code: which switches each piece's key presses.

Each slot holds ``n`` microswitches (7 by default) in a row across the slot
floor, numbered 1..n left to right seen from the front. A piece's key base has
a tooth where it presses a switch and a notch where it leaves one open; the
teeth come down on the switches together as the piece bottoms out. Every key
presses exactly ``m`` switches (3 by default): a *constant-weight m-of-n code*.
A half-seated or tilted key presses only some of its switches and a
stuck-open switch drops one, so the pattern then has fewer than ``m`` switches
closed and is never another piece's code; a stuck-closed switch adds one and
is caught the same way. (The row must not lie along the insertion path: a
key sliding over the switches would show shifted patterns, which can be
other codewords.)

A codeword is written as a string of ``'0'``/``'1'`` of length ``n``, switch 1
first (``"1110000"`` presses switches 1, 2 and 3). This string is the token a
key reader reports.

Ordering rule (the table is generated, never hand-edited): the codewords are
the ``m``-element sets of switch numbers in :func:`itertools.combinations`
order (lexicographic on the ascending switch numbers: {1,2,3}, {1,2,4}, ...,
{5,6,7}); the k-th piece of :func:`arbiter.rules.pieces.all_pieces` (White first,
ranks from 5*G down to FLG) gets the k-th codeword. The codewords left over
(5 for 3-of-7) are unused: a key bearing one is an *unknown piece*, never a
default. All pieces of one side and rank (the six Privates, the two Spies)
share one code.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from arbiter.rules.errors import KeyCodeError, UnknownKeyError
from arbiter.rules.pieces import Piece, all_pieces

#: Most switches a slot may have (an MCP23017 port pair has 16 lines).
MAX_SWITCHES = 16

#: Mark for a switch the key presses (a tooth) and one it leaves open (a notch).
TOOTH = "●"
NOTCH = "○"


def to_bits(closed: Iterable[bool]) -> str:
    """The token for switch states given switch 1 first (True = closed)."""
    return "".join("1" if c else "0" for c in closed)


def pressed_switches(bits: str) -> tuple[int, ...]:
    """The 1-based numbers of the closed switches in ``bits``."""
    return tuple(i + 1 for i, c in enumerate(bits) if c == "1")


def notch_pattern(bits: str) -> str:
    """The key base drawn switch 1 first: ``●`` presses, ``○`` is a notch."""
    return "".join(TOOTH if c == "1" else NOTCH for c in bits)


@dataclass(frozen=True)
class KeyCode:
    """A constant-weight ``weight``-of-``switches`` key code and its piece table.

    :raises KeyCodeError: unless ``1 <= weight < switches <= 16`` and there are
        at least as many codewords as pieces (30).
    """

    weight: int = 3
    switches: int = 7
    _by_piece: dict[Piece, str] = field(init=False, repr=False, compare=False)
    _by_token: dict[str, Piece] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not 1 <= self.weight < self.switches <= MAX_SWITCHES:
            raise KeyCodeError(
                f"need 1 <= weight < switches <= {MAX_SWITCHES}, "
                f"got {self.weight}-of-{self.switches}"
            )
        pieces = all_pieces()
        if self.size < len(pieces):
            raise KeyCodeError(
                f"{self.weight}-of-{self.switches} has {self.size} codewords, "
                f"fewer than the {len(pieces)} pieces"
            )
        words = itertools.islice(self._words(), len(pieces))
        by_piece = dict(zip(pieces, words, strict=True))
        object.__setattr__(self, "_by_piece", by_piece)
        object.__setattr__(self, "_by_token", {w: p for p, w in by_piece.items()})

    def _words(self) -> Iterable[str]:
        for chosen in itertools.combinations(range(self.switches), self.weight):
            yield "".join("1" if i in chosen else "0" for i in range(self.switches))

    @property
    def size(self) -> int:
        """How many codewords the code has (35 for 3-of-7)."""
        return math.comb(self.switches, self.weight)

    @property
    def empty(self) -> str:
        """The all-open pattern of an empty slot."""
        return "0" * self.switches

    def codewords(self) -> list[str]:
        """Every codeword, used or not, in table order."""
        return list(self._words())

    def unused(self) -> list[str]:
        """The codewords no piece bears, in table order."""
        return [w for w in self._words() if w not in self._by_token]

    def is_codeword(self, bits: str) -> bool:
        """True when ``bits`` has ``switches`` digits of which exactly ``weight`` are 1.

        Unused codewords count too; :meth:`piece` tells them apart.
        """
        return (
            len(bits) == self.switches
            and set(bits) <= {"0", "1"}
            and bits.count("1") == self.weight
        )

    def codeword(self, piece: Piece) -> str:
        """The codeword on ``piece``'s key."""
        return self._by_piece[piece]

    def piece(self, token: str) -> Piece:
        """The piece whose key bears ``token``.

        :raises UnknownKeyError: for an unused codeword or a non-codeword.
        """
        found = self._by_token.get(token)
        if found is not None:
            return found
        if self.is_codeword(token):
            raise UnknownKeyError(token, "unused codeword, not a piece")
        raise UnknownKeyError(token, f"not a {self.weight}-of-{self.switches} codeword")

    def table(self) -> list[tuple[Piece, str]]:
        """Every piece with its codeword, in :func:`~arbiter.rules.pieces.all_pieces` order."""
        return list(self._by_piece.items())

    def chart_markdown(self) -> str:
        """The key code chart as a Markdown table, unused codewords last."""
        lines = [
            "| Piece | Name | Codeword | Switches pressed | Key base (● tooth, ○ notch) |",
            "|---|---|---|---|---|",
        ]
        for piece, word in self.table():
            name = f"{piece.side.title} {piece.rank.full_name}"
            lines.append(_chart_row(f"`{piece}`", name, word))
        for word in self.unused():
            lines.append(_chart_row("(unused)", "unknown piece", word))
        return "\n".join(lines) + "\n"


def _chart_row(label: str, name: str, word: str) -> str:
    switches = ", ".join(str(n) for n in pressed_switches(word))
    return f"| {label} | {name} | `{word}` | {switches} | {notch_pattern(word)} |"


#: The published code: 3-of-7 (35 codewords, 30 used).
DEFAULT_KEYCODE = KeyCode()


def chart_markdown(keycode: KeyCode = DEFAULT_KEYCODE) -> str:
    """The Markdown chart of ``keycode`` for the README and ``hardware/`` docs."""
    return keycode.chart_markdown()
