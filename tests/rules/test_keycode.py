"""The published notched-key code (3-of-7 constant weight)."""

from __future__ import annotations

import itertools

import pytest

from arbiter.rules.errors import KeyCodeError, UnknownKeyError
from arbiter.rules.keycode import DEFAULT_KEYCODE, KeyCode, chart_markdown, to_bits
from arbiter.rules.pieces import Piece, all_pieces
from arbiter.rules.ranks import Rank, Side

ALL_PIECES = all_pieces()


def _published_table() -> list[tuple[str, str]]:
    """The documented rule, computed independently: m-subsets of switches 1..7 in
    combinations order, given to the pieces White 5*G .. FLG then Black 5*G .. FLG."""
    words = []
    for chosen in itertools.combinations([1, 2, 3, 4, 5, 6, 7], 3):
        words.append("".join("1" if n in chosen else "0" for n in range(1, 8)))
    names = [f"{side}:{code}" for side in "WB" for code in (
        "5*G", "4*G", "3*G", "2*G", "1*G", "COL", "LTC", "MAJ",
        "CPT", "1LT", "2LT", "SGT", "PVT", "SPY", "FLG",
    )]  # fmt: skip
    return list(zip(names, words[:30], strict=True))


def test_keycode_default_table_is_the_published_one() -> None:
    table = [(str(piece), word) for piece, word in DEFAULT_KEYCODE.table()]
    assert table == _published_table()


def test_keycode_pins_a_few_published_codewords() -> None:
    assert DEFAULT_KEYCODE.codeword(Piece.parse("W:5*G")) == "1110000"
    assert DEFAULT_KEYCODE.codeword(Piece.parse("W:FLG")) == "1000011"
    assert DEFAULT_KEYCODE.codeword(Piece.parse("B:5*G")) == "0111000"
    assert DEFAULT_KEYCODE.codeword(Piece.parse("B:FLG")) == "0010101"
    assert DEFAULT_KEYCODE.unused() == ["0010011", "0001110", "0001101", "0001011", "0000111"]


def test_keycode_all_30_codewords_distinct_and_weight_3() -> None:
    words = [word for _, word in DEFAULT_KEYCODE.table()]
    assert len(words) == 30
    assert len(set(words)) == 30
    for word in words:
        assert len(word) == 7
        assert set(word) <= {"0", "1"}
        assert word.count("1") == 3


def test_keycode_table_covers_every_piece_once() -> None:
    assert [piece for piece, _ in DEFAULT_KEYCODE.table()] == ALL_PIECES


@pytest.mark.parametrize("piece", ALL_PIECES, ids=str)
def test_keycode_codeword_and_piece_round_trip(piece: Piece) -> None:
    word = DEFAULT_KEYCODE.codeword(piece)
    assert DEFAULT_KEYCODE.is_codeword(word)
    assert DEFAULT_KEYCODE.piece(word) == piece


def test_keycode_every_partial_insertion_is_detected() -> None:
    """Exhaustively: each proper non-empty subset of a key's pressed switches is no codeword."""
    checked = 0
    for word in DEFAULT_KEYCODE.codewords():
        pressed = [i for i, c in enumerate(word) if c == "1"]
        for size in range(1, len(pressed)):
            for subset in itertools.combinations(pressed, size):
                partial = "".join("1" if i in subset else "0" for i in range(7))
                assert not DEFAULT_KEYCODE.is_codeword(partial), (word, partial)
                with pytest.raises(UnknownKeyError):
                    DEFAULT_KEYCODE.piece(partial)
                checked += 1
    assert checked == 35 * 6  # 3 singles + 3 pairs per codeword


def test_keycode_every_single_switch_fault_is_detected() -> None:
    """A stuck-open or stuck-closed switch changes the weight, so no piece reads as another."""
    for word in DEFAULT_KEYCODE.codewords():
        for i in range(7):
            flipped = word[:i] + ("0" if word[i] == "1" else "1") + word[i + 1 :]
            assert not DEFAULT_KEYCODE.is_codeword(flipped)


@pytest.mark.parametrize("word", ["0010011", "0001110", "0001101", "0001011", "0000111"])
def test_keycode_unused_codeword_is_unknown_piece(word: str) -> None:
    assert DEFAULT_KEYCODE.is_codeword(word)
    with pytest.raises(UnknownKeyError) as info:
        DEFAULT_KEYCODE.piece(word)
    assert info.value.token == word


@pytest.mark.parametrize("token", ["", "0000000", "1111111", "111000", "11100000", "1120000"])
def test_keycode_non_codewords_are_rejected(token: str) -> None:
    assert not DEFAULT_KEYCODE.is_codeword(token)
    with pytest.raises(UnknownKeyError):
        DEFAULT_KEYCODE.piece(token)


def test_keycode_private_and_spy_share_one_code_per_side() -> None:
    white_pvt = DEFAULT_KEYCODE.codeword(Piece(Side.WHITE, Rank.PRIVATE))
    black_pvt = DEFAULT_KEYCODE.codeword(Piece(Side.BLACK, Rank.PRIVATE))
    assert white_pvt != black_pvt
    assert DEFAULT_KEYCODE.piece(white_pvt) == Piece(Side.WHITE, Rank.PRIVATE)


def test_keycode_4_of_8_has_70_codewords() -> None:
    code = KeyCode(weight=4, switches=8)
    assert code.size == 70
    assert len(code.codewords()) == 70
    assert len(code.unused()) == 40
    words = [w for _, w in code.table()]
    assert len(set(words)) == 30
    assert all(len(w) == 8 and w.count("1") == 4 for w in words)


@pytest.mark.parametrize(
    ("weight", "switches"),
    [(2, 7), (3, 6), (1, 16), (15, 16), (0, 7), (7, 7), (8, 7), (3, 17)],
)
def test_keycode_too_few_codewords_or_bad_shape_raise(weight: int, switches: int) -> None:
    with pytest.raises(KeyCodeError):
        KeyCode(weight=weight, switches=switches)


def test_keycode_to_bits_puts_switch_1_first() -> None:
    assert to_bits([True, False, True, False, False, False, True]) == "1010001"


def test_keycode_chart_lists_every_piece_and_unused_codeword() -> None:
    chart = chart_markdown()
    lines = chart.strip().splitlines()
    assert lines[0].startswith("|") and set(lines[1]) <= {"|", "-"}
    rows = lines[2:]
    assert len(rows) == 35
    assert "| `W:5*G` |" in rows[0]
    assert "`1110000`" in rows[0] and "| 1, 2, 3 |" in rows[0] and "●●●○○○○" in rows[0]
    assert "`B:FLG`" in rows[29] and "○○●○●○●" in rows[29]
    assert all("(unused)" in row for row in rows[30:])
    for piece, word in DEFAULT_KEYCODE.table():
        assert any(f"`{piece}`" in row and f"`{word}`" in row for row in rows)
