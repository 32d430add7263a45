from __future__ import annotations

import pytest

from arbiter.rules.errors import PieceError
from arbiter.rules.pieces import Piece, all_pieces, parse_rank
from arbiter.rules.ranks import ARMY_SIZE, Rank, Side


def test_ranks_army_has_21_pieces_in_15_ranks() -> None:
    assert len(Rank) == 15
    assert ARMY_SIZE == 21
    assert Rank.PRIVATE.count == 6
    assert Rank.SPY.count == 2
    assert all(r.count == 1 for r in Rank if r not in (Rank.PRIVATE, Rank.SPY))


@pytest.mark.parametrize(
    ("text", "rank"),
    [
        ("5*G", Rank.GENERAL_OF_THE_ARMY),
        ("5*g", Rank.GENERAL_OF_THE_ARMY),
        ("five-star general", Rank.GENERAL_OF_THE_ARMY),
        ("General of the Army", Rank.GENERAL_OF_THE_ARMY),
        ("spy", Rank.SPY),
        ("Agent", Rank.SPY),
        ("private", Rank.PRIVATE),
        ("pvt", Rank.PRIVATE),
        ("flag", Rank.FLAG),
        ("1lt", Rank.FIRST_LIEUTENANT),
        ("Lieutenant Colonel", Rank.LIEUTENANT_COLONEL),
        ("sgt", Rank.SERGEANT),
        ("two-star general", Rank.MAJOR_GENERAL),
    ],
)
def test_pieces_parse_rank_accepts_codes_and_names(text: str, rank: Rank) -> None:
    assert parse_rank(text) is rank


@pytest.mark.parametrize("rank", list(Rank))
def test_pieces_every_code_parses_in_any_case(rank: Rank) -> None:
    assert parse_rank(rank.code.lower()) is rank
    assert parse_rank(rank.full_name.upper()) is rank


@pytest.mark.parametrize("bad", ["", "6*G", "general of the navy", "queen", "W:5*G"])
def test_pieces_parse_rank_names_bad_token(bad: str) -> None:
    with pytest.raises(PieceError) as info:
        parse_rank(bad)
    assert repr(bad) in str(info.value)
    assert info.value.token == bad


def test_pieces_round_trip_text() -> None:
    assert len(all_pieces()) == 30
    for piece in all_pieces():
        assert Piece.parse(str(piece)) == piece
    assert str(Piece(Side.BLACK, Rank.SPY)) == "B:SPY"
    assert Piece.parse("w:5*g") == Piece(Side.WHITE, Rank.GENERAL_OF_THE_ARMY)
    assert Piece.parse("Black:private") == Piece(Side.BLACK, Rank.PRIVATE)


@pytest.mark.parametrize(("bad", "token"), [("X:SPY", "X"), ("W:ZZZ", "ZZZ"), ("WSPY", "WSPY")])
def test_pieces_parse_piece_errors_name_token(bad: str, token: str) -> None:
    with pytest.raises(PieceError) as info:
        Piece.parse(bad)
    assert info.value.token == token
