"""The game record's refusals, endings and views (RULES.md, PRODUCT.md)."""

from __future__ import annotations

import json

import pytest

from arbiter.rules.game import (
    Challenge,
    EliminatedPieceError,
    Ending,
    EndingError,
    EndingKind,
    Game,
    GameInProgressError,
    GameOverError,
    SameSideError,
    SameTagError,
    survivors,
)
from arbiter.rules.pieces import Piece, all_pieces
from arbiter.rules.ranks import Rank, Side

P = Piece.parse


def play(game: Game, attacker: str, defender: str, a_tag: str | None = None,
         d_tag: str | None = None) -> Challenge:
    a, d = P(attacker), P(defender)
    verdict = game.check(a, d, a_tag, d_tag)
    challenge = Challenge(len(game.challenges) + 1, a, d, verdict, 100.0, a_tag, d_tag)
    game.apply(challenge)
    return challenge


def test_game_refuses_same_side() -> None:
    game = Game(1, 0.0)
    with pytest.raises(SameSideError):
        game.check(P("W:5*G"), P("W:SPY"))
    assert game.challenges == []


def test_game_refuses_same_tag_in_both_slots() -> None:
    game = Game(1, 0.0)
    with pytest.raises(SameTagError):
        game.check(P("W:5*G"), P("B:SPY"), "62E3086CED", "62E3086CED")


def test_game_refuses_tagged_piece_eliminated_earlier() -> None:
    game = Game(1, 0.0)
    play(game, "W:SPY", "B:PVT", "AAAA", "BBBB")  # the Private eliminates the Spy
    with pytest.raises(EliminatedPieceError):
        game.check(P("W:SPY"), P("B:COL"), "AAAA", "CCCC")
    # the other spy (another tag) may still play
    assert game.check(P("W:SPY"), P("B:COL"), "DDDD", "CCCC").survivor.value == "attacker"


def test_game_refuses_more_of_a_rank_than_an_army_has() -> None:
    game = Game(1, 0.0)
    for _ in range(6):  # all six white privates fall to the black colonel
        play(game, "W:PVT", "B:COL")
    with pytest.raises(EliminatedPieceError):
        game.check(P("W:PVT"), P("B:COL"))
    play(game, "B:SPY", "W:5*G")  # the spy takes the general
    with pytest.raises(EliminatedPieceError):
        game.check(P("W:5*G"), P("B:MAJ"))
    assert len(game.challenges) == 7


def test_game_split_eliminates_both() -> None:
    game = Game(1, 0.0)
    play(game, "W:MAJ", "B:MAJ")
    assert game.eliminated(Side.WHITE) == [P("W:MAJ")]
    assert game.eliminated(Side.BLACK) == [P("B:MAJ")]
    assert game.public_view()["verdicts"][0]["result"] == "split"


@pytest.mark.parametrize(
    ("attacker", "defender", "winner"),
    [
        ("W:PVT", "B:FLG", Side.WHITE),
        ("B:FLG", "W:SPY", Side.WHITE),
        ("W:FLG", "B:FLG", Side.WHITE),
        ("B:FLG", "W:FLG", Side.BLACK),
    ],
)
def test_game_fallen_flag_ends_game(attacker: str, defender: str, winner: Side) -> None:
    game = Game(1, 0.0)
    play(game, attacker, defender)
    assert game.over
    assert game.ending is not None
    assert game.ending.kind is EndingKind.FLAG_CAPTURED
    assert game.ending.winner is winner
    with pytest.raises(GameOverError):
        game.check(P("W:5*G"), P("B:PVT"))


def test_game_declared_endings() -> None:
    game = Game(1, 0.0)
    game.end(Ending(EndingKind.RESIGNATION, Side.BLACK, 5.0))
    assert game.over
    with pytest.raises(EndingError):
        game.end(Ending(EndingKind.DRAW, None, 6.0))
    with pytest.raises(EndingError):
        Ending(EndingKind.FLAG_HOME, None, 1.0)
    with pytest.raises(EndingError):
        Ending(EndingKind.DRAW, Side.WHITE, 1.0)


def test_game_public_view_holds_no_rank_and_full_record_waits() -> None:
    game = Game(7, 0.0)
    play(game, "W:SPY", "B:5*G", "T1", "T2")
    play(game, "B:PVT", "W:SPY", "T3", "T4")
    text = json.dumps(game.public_view())
    for piece in all_pieces():
        assert piece.rank.code not in text
        assert piece.rank.full_name not in text
    assert "T1" not in text
    assert game.public_view()["eliminated"] == {"W": 1, "B": 1}
    with pytest.raises(GameInProgressError):
        game.full_record()
    play(game, "W:COL", "B:FLG")
    record = game.full_record()
    assert [c["attacker"] for c in record["challenges"]] == ["W:SPY", "B:PVT", "W:COL"]
    assert record["fallen"] == {"W": ["W:SPY"], "B": ["B:5*G", "B:FLG"]}
    assert len(record["survivors"]["W"]) == 20
    assert len(record["survivors"]["B"]) == 19


def test_game_survivors_start_as_full_army() -> None:
    game = Game(1, 0.0)
    army = survivors(game, Side.WHITE)
    assert len(army) == 21
    assert army.count(Piece(Side.WHITE, Rank.PRIVATE)) == 6
