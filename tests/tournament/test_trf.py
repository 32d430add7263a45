"""TRF files read and written: what real software writes, and what is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from arbiter.tournament.errors import PlayerNameError, TrfError
from arbiter.tournament.model import Bye, Colour, Game, Pairing, Player, Result
from arbiter.tournament.names import MAX_NAME_LENGTH, check_name
from arbiter.tournament.swiss import swiss_round
from arbiter.tournament.trf import MAX_PLAYERS, export_trf, import_trf


def _line(rank: int, name: str, *blocks: str, points: float = 0.0) -> str:
    head = f"001 {rank:>4}      {name:<33} 2000{'':27} {points:>4.1f} {rank:>4}"
    return head + "".join(f"  {b}" for b in blocks)


def _file(*lines: str, rounds: int | None = 3) -> str:
    head = ["012 Test"] + ([f"XXR {rounds}"] if rounds is not None else [])
    return "\n".join([*head, *lines]) + "\n"


FOUR = [
    _line(1, "Ana", "0003 b 1", "0002 w +"),
    _line(2, "Ben", "0004 w =", "0001 b -"),
    _line(3, "Cy", "0001 w 0", "0000 - H"),
    _line(4, "Dee", "0002 b =", "0000 - Z"),
]


def test_forfeits_and_byes_are_read_as_games_not_played() -> None:
    event = import_trf(_file(*FOUR))
    round2 = [g for g in event.games if g.pairing.round == 2]
    assert round2[0] == Game(Pairing(2, 1, "Ana", "Ben"), Result.WHITE_WIN, forfeit=True)
    assert not round2[0].played
    assert {(g.pairing.white, g.bye) for g in round2[1:]} == {("Cy", Bye.HALF), ("Dee", Bye.ZERO)}
    assert [g.points("Cy") for g in round2[1:2]] == [0.5]


def test_player_one_with_black_in_round_one_exports_black1() -> None:
    event = import_trf(_file(*FOUR))
    assert event.initial is Colour.BLACK
    text = export_trf(event.name, event.players, event.games, 3)
    assert "XXC black1" in text
    assert "XXC white1" not in text
    # What it wrote reads back as the same games.
    assert import_trf(text).games == event.games


def test_forfeit_codes_are_written_back() -> None:
    event = import_trf(_file(*FOUR))
    lines = export_trf(event.name, event.players, event.games, 3).splitlines()
    assert lines[3].endswith("0003 b 1  0002 w +")
    assert lines[4].endswith("0004 w =  0001 b -")
    assert lines[5].endswith("0001 w 0  0000 - H")
    assert lines[6].endswith("0002 b =  0000 - Z")


def test_a_double_forfeit_scores_nothing_for_either() -> None:
    event = import_trf(_file(_line(1, "Ana", "0002 w -"), _line(2, "Ben", "0001 b -")))
    (game,) = event.games
    assert game.forfeit and game.result is None
    assert game.points("Ana") == game.points("Ben") == 0.0


def test_a_forfeit_is_no_meeting_the_two_may_be_paired_again() -> None:
    # C.04.1: only games played count as meetings; after a forfeit the two may meet.
    players = [Player("Ana", 2000), Player("Ben", 1900)]
    forfeit = Game(Pairing(1, 1, "Ana", "Ben"), Result.WHITE_WIN, forfeit=True)
    assert swiss_round(players, [forfeit], 2) == [Pairing(2, 1, "Ana", "Ben")]
    played = Game(Pairing(1, 1, "Ana", "Ben"), Result.WHITE_WIN)
    with pytest.raises(Exception, match="no legal pairing"):
        swiss_round(players, [played], 2)


def test_a_bye_given_for_the_coming_round_keeps_the_player_out_and_is_exported() -> None:
    players = [Player(n, 2000 - i) for i, n in enumerate(["Ana", "Ben", "Cy", "Dee", "Eve"])]
    games = [
        Game(Pairing(1, 1, "Ana", "Cy"), Result.WHITE_WIN),
        Game(Pairing(1, 2, "Dee", "Ben"), Result.DRAW),
        Game(Pairing(1, 3, "Eve", None)),
        Game(Pairing(2, 1, "Ben", None), bye=Bye.HALF),
    ]
    pairings = swiss_round(players, games, 2, 5)
    assert "Ben" not in {n for p in pairings for n in (p.white, p.black)}
    assert len(pairings) == 2
    text = export_trf("Test", players, games, 5)
    assert text.splitlines()[4].endswith("0000 - H")  # Ben's line: round 2 given ahead
    assert import_trf(text).games == tuple(games)


@pytest.mark.parametrize("ending", ["\r", "\r\n", "\n"])
def test_no_xxr_and_any_line_ending(ending: str) -> None:
    event = import_trf(ending.join(_file(*FOUR, rounds=None).splitlines()))
    assert event.total_rounds == 2
    assert len(event.players) == 4


def test_blank_rounds_are_a_late_or_absent_player() -> None:
    late = _line(3, "Cy", " " * 8, "0000 - H")  # round 1 blank: not there yet
    event = import_trf(_file(_line(1, "Ana", "0002 w 1"), _line(2, "Ben", "0001 b 0"), late))
    assert [g for g in event.games if "Cy" in (g.pairing.white, g.pairing.black)] == [
        Game(Pairing(2, 1, "Cy", None), bye=Bye.HALF)
    ]


def test_a_start_rank_twice_is_refused_naming_both_lines() -> None:
    text = _file(_line(1, "Alice"), _line(2, "Bob"), _line(1, "Mallory"))
    with pytest.raises(TrfError, match=r"line 5: start rank 1 again \(first on line 3\)"):
        import_trf(text)


@pytest.mark.parametrize("rounds", [0, -7, 1001, 10**12])
def test_an_impossible_number_of_rounds_is_refused(rounds: int) -> None:
    with pytest.raises(TrfError, match=f"line 2: XXR {rounds}: an event has from 1 to 1000"):
        import_trf(_file(_line(1, "Ana"), _line(2, "Ben"), rounds=rounds))


def test_the_most_rounds_a_trf_announces_is_what_a_table_can_be_assigned() -> None:
    from arbiter import wire
    from arbiter.tournament.trf import MAX_ROUNDS

    assert MAX_ROUNDS == wire.MAX_ROUND


def test_a_file_bigger_than_any_event_needs_is_refused_before_it_is_read(
    tmp_path: Path,
) -> None:
    from arbiter.tournament.trf import MAX_FILE_BYTES, read_trf_file

    # A 1,000-player event of 30 rounds fits with room to spare...
    big_event = _file(*[_line(i, f"P{i}") + "  0000 - -" * 30 for i in range(1, 1001)])
    assert len(big_event.encode()) < MAX_FILE_BYTES / 8
    # ...a file past the limit is refused by its size, naming the file, whatever it holds.
    huge = tmp_path / "huge.trf"
    with huge.open("wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)
    with pytest.raises(TrfError, match=r"huge.trf: more than 4 MB.*not read"):
        read_trf_file(huge)
    with pytest.raises(TrfError, match="more than 4 MB"):
        import_trf("\n" * (MAX_FILE_BYTES + 1))
    exact = tmp_path / "ok.trf"
    exact.write_bytes(b"\xef\xbb\xbf" + big_event.encode())
    assert read_trf_file(exact) == big_event  # the byte order mark dropped
    exact.write_bytes(b"012 \xff\n")
    with pytest.raises(TrfError, match="not UTF-8 text"):
        read_trf_file(exact)


def test_fewer_rounds_announced_than_paired_is_refused() -> None:
    with pytest.raises(TrfError, match="XXR 1, but 2 rounds were paired"):
        import_trf(_file(*FOUR, rounds=1))


def test_more_players_than_four_digits_number_is_refused_at_the_first_too_many() -> None:
    lines = [_line(i, f"P{i}") for i in range(1, MAX_PLAYERS + 1)]
    lines.append(_line(1, "Extra").replace("001    1", "001 0000"))
    with pytest.raises(TrfError, match=f"line {MAX_PLAYERS + 3}: more than {MAX_PLAYERS}"):
        import_trf(_file(*lines))


@pytest.mark.parametrize(
    "bad",
    ["Ana\x1b[31m", "Ana\u200b", "\u202eanA", "Ana\u00a0Li", "A\x00"],
    ids=["escape", "zero-width", "rtl-override", "nbsp", "nul"],
)
def test_names_with_control_or_invisible_characters_are_refused(bad: str) -> None:
    with pytest.raises(PlayerNameError, match=r"U\+"):
        check_name(bad)
    with pytest.raises(TrfError, match=r"line 3: .*U\+"):
        import_trf(_file(_line(1, bad), _line(2, "Ben")))


def test_the_name_rule_keeps_ordinary_names() -> None:
    assert check_name("  José Ñúñez-O'Brien  ") == "José Ñúñez-O'Brien"
    assert check_name("Jose\u0301") == "Jos\u00e9"  # composed: one name, one spelling
    assert check_name("李小龍") == "李小龍"
    with pytest.raises(PlayerNameError, match="empty"):
        check_name("   ")
    with pytest.raises(PlayerNameError, match=f"more than the {MAX_NAME_LENGTH}"):
        check_name("x" * (MAX_NAME_LENGTH + 1))


def test_a_name_with_a_newline_cannot_be_exported() -> None:
    players = [Player("Ana\nBen", 2000), Player("Cy", 1900)]
    with pytest.raises(TrfError, match=r"U\+000A"):
        export_trf("Test", players, [], 3)


def test_players_who_disagree_about_a_forfeit_are_refused() -> None:
    text = _file(_line(1, "Ana", "0002 w +"), _line(2, "Ben", "0001 b 1"))
    with pytest.raises(TrfError, match="disagree"):
        import_trf(text)
