"""The game record's refusals, endings and views (RULES.md, PRODUCT.md)."""

from __future__ import annotations

import json

import pytest

from arbiter.rules.contenders import Contenders, Identity
from arbiter.rules.errors import (
    EliminatedPieceError,
    EndingError,
    GameOverError,
    RecordSealedError,
    SameSideError,
    SameTagError,
)
from arbiter.rules.game import Challenge, Ending, EndingKind, Game, survivors
from arbiter.rules.pieces import Piece, all_pieces
from arbiter.rules.ranks import Rank, Side
from arbiter.rules.verdict import Role, Survivor

P = Piece.parse


def pair(attacker: str, defender: str, a_tag: str | None = None,
         d_tag: str | None = None) -> Contenders:
    return Contenders(Identity(P(attacker), a_tag), Identity(P(defender), d_tag))


def play(game: Game, attacker: str, defender: str, a_tag: str | None = None,
         d_tag: str | None = None) -> Challenge:
    contenders = pair(attacker, defender, a_tag, d_tag)
    verdict = game.check(contenders)
    challenge = Challenge(len(game.challenges) + 1, contenders, verdict, 100.0)
    game.apply(challenge)
    return challenge


def test_game_refuses_same_side() -> None:
    game = Game(1, 0.0)
    with pytest.raises(SameSideError):
        game.check(pair("W:5*G", "W:SPY"))
    assert game.challenges == []


def test_game_refuses_same_tag_in_both_slots() -> None:
    game = Game(1, 0.0)
    with pytest.raises(SameTagError):
        game.check(pair("W:5*G", "B:SPY", "62E3086CED", "62E3086CED"))


def test_game_refuses_tagged_piece_eliminated_earlier() -> None:
    game = Game(1, 0.0)
    play(game, "W:SPY", "B:PVT", "AAAA", "BBBB")  # the Private eliminates the Spy
    with pytest.raises(EliminatedPieceError):
        game.check(pair("W:SPY", "B:COL", "AAAA", "CCCC"))
    # the other spy (another tag) may still play
    assert game.check(pair("W:SPY", "B:COL", "DDDD", "CCCC")).survivor.value == "attacker"


def test_contenders_name_each_role() -> None:
    contenders = Contenders(Identity(P("W:SPY"), "AAAA"), Identity(P("B:PVT")))
    assert contenders.identity(Role.ATTACKER) == Identity(P("W:SPY"), "AAAA")
    assert (contenders.piece(Role.ATTACKER), contenders.tag(Role.ATTACKER)) == (P("W:SPY"), "AAAA")
    assert (contenders.piece(Role.DEFENDER), contenders.tag(Role.DEFENDER)) == (P("B:PVT"), None)
    assert Contenders.untagged(P("W:SPY"), P("B:PVT")) == pair("W:SPY", "B:PVT")


def test_game_one_tag_in_both_slots_is_a_misread_even_of_one_side() -> None:
    # One physical piece cannot sit in both slots: the reason is the misread, not the side.
    game = Game(1, 0.0)
    with pytest.raises(SameTagError) as refused:
        game.check(pair("W:SPY", "W:SPY", "AAAA", "AAAA"))
    assert refused.value.public_reason == "the same piece reads in both slots (misread)"


def test_game_refuses_eliminated_tag_in_the_other_role() -> None:
    game = Game(1, 0.0)
    play(game, "W:SPY", "B:PVT", "AAAA", "BBBB")  # the Private eliminates the attacking Spy
    with pytest.raises(EliminatedPieceError) as refused:
        game.check(pair("B:COL", "W:SPY", "CCCC", "AAAA"))  # now it defends
    assert "AAAA" in str(refused.value)
    assert refused.value.public_reason == "a piece in the slots was already eliminated"
    # the Private survived: its tag may attack again
    assert game.check(pair("B:PVT", "W:SPY", "BBBB", "DDDD")).survivor is Survivor.ATTACKER


def test_challenge_reads_its_contenders() -> None:
    game = Game(1, 0.0)
    challenge = play(game, "B:PVT", "W:SPY", "BBBB", "AAAA")
    assert (challenge.attacker, challenge.defender) == (P("B:PVT"), P("W:SPY"))
    assert (challenge.attacker_tag, challenge.defender_tag) == ("BBBB", "AAAA")
    assert challenge.eliminated == (P("W:SPY"),)  # the Private takes the Spy
    assert challenge.tag(Role.DEFENDER) == "AAAA"


def test_game_refuses_more_of_a_rank_than_an_army_has() -> None:
    game = Game(1, 0.0)
    for _ in range(6):  # all six white privates fall to the black colonel
        play(game, "W:PVT", "B:COL")
    with pytest.raises(EliminatedPieceError):
        game.check(pair("W:PVT", "B:COL"))
    play(game, "B:SPY", "W:5*G")  # the spy takes the general
    with pytest.raises(EliminatedPieceError):
        game.check(pair("W:5*G", "B:MAJ"))
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
        game.check(pair("W:5*G", "B:PVT"))


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
    with pytest.raises(RecordSealedError):
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


# -- an abandoned game: sealed until the next game has begun (issue 27 item 9) -----------


def test_game_abandoned_with_challenges_is_sealed_until_revealed() -> None:
    game = Game(id=1, started_at=0.0)
    play(game, "W:SPY", "B:5*G")
    game.end(Ending(EndingKind.ABANDONED, None, 200.0))
    assert game.over and game.abandoned and game.sealed
    with pytest.raises(RecordSealedError, match="next game"):
        game.full_record()
    game.reveal(300.0)
    assert not game.sealed and game.revealed_at == 300.0
    assert game.full_record()["challenges"][0]["attacker"] == "W:SPY"
    with pytest.raises(EndingError, match="already"):
        game.reveal(400.0)


@pytest.mark.parametrize(
    ("ending", "challenges", "sealed"),
    [
        (None, 0, True),  # on: sealed, as ever
        (None, 1, True),
        (EndingKind.ABANDONED, 0, False),  # nothing played: nothing to hide
        (EndingKind.ABANDONED, 1, True),
        (EndingKind.DRAW, 1, False),  # ended normally: revealed at once, as before
        (EndingKind.RESIGNATION, 1, False),
        (EndingKind.FLAG_HOME, 1, False),
    ],
)
def test_game_sealed_by_ending(ending: EndingKind | None, challenges: int, sealed: bool) -> None:
    game = Game(id=1, started_at=0.0)
    for _ in range(challenges):
        play(game, "W:COL", "B:MAJ")
    if ending is not None:
        winner = Side.WHITE if ending.has_winner else None
        game.end(Ending(ending, winner, 200.0))
    assert game.sealed is sealed


def test_game_reveal_refused_unless_abandoned() -> None:
    game = Game(id=1, started_at=0.0)
    with pytest.raises(EndingError, match="not abandoned"):
        game.reveal(1.0)  # on
    play(game, "W:PVT", "B:FLG")
    with pytest.raises(EndingError, match="not abandoned"):
        game.reveal(1.0)  # flag captured: revealed anyway
