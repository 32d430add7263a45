"""Reading players from CSV."""

from __future__ import annotations

import pytest

from arbiter.tournament.errors import PlayerImportError
from arbiter.tournament.model import Player
from arbiter.tournament.players_csv import read_players_csv


def test_players_csv_reads_names_and_ratings_in_order() -> None:
    text = "Name, Rating ,club\n Ana ,1800,x\n\nBen,,y\nCarla,1650\n"
    assert read_players_csv(text) == [Player("Ana", 1800), Player("Ben", 0), Player("Carla", 1650)]


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("rating\n1200\n", 1, "no 'name' column"),
        ("name,rating\nAna,12x\n", 2, "not a whole number"),
        ("name\nAna\n\nAna\n", 4, "appears twice"),
        ("name\nAna\nana\n", 3, "appears twice"),  # names ignore case (19.17)
        ("name,rating\nAna,-5\n", 2, "not a whole number of 0 or more"),  # as the form
        ("name,rating\nAna,+5\n", 2, "not a whole number of 0 or more"),
        ("name,rating\n ,1200\n", 2, "name is empty"),
        ("name\n" + "x" * 34 + "\n", 2, "34 characters, more than the 33 a TRF file holds"),
        # The one rule of names (names.py), as the API and TRF import keep it.
        ('name\n"Ana\nBen"\n', 2, "U+000A"),  # a newline inside a quoted cell
        ("name\nAna\u200b\n", 2, "U+200B (ZERO WIDTH SPACE)"),
        ("name\n\u202eanA\n", 2, "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
        ("name\nAna\x1b[31m\n", 2, "U+001B"),
        ("name\nAna\t\n", 2, "U+0009"),
        ("\n\n", 1, "no header"),
    ],
)
def test_players_csv_names_the_bad_line(text: str, line: int, words: str) -> None:
    with pytest.raises(PlayerImportError) as caught:
        read_players_csv(text)
    assert caught.value.line == line
    assert words in str(caught.value)


def test_a_name_differing_only_in_case_is_refused_beside_a_registered_one() -> None:
    from arbiter.tournament.errors import DuplicatePlayerError
    from arbiter.tournament.model import check_unique

    with pytest.raises(DuplicatePlayerError, match=r"'ana'.*as 'Ana'"):
        check_unique([Player("Ana"), Player("Ben"), Player("ana")])
    check_unique([Player("Ana"), Player("Anna")])  # different names still pass
