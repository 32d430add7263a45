"""One rule for players' names, wherever they come from: a TRF file, a CSV file, the API.

A name is what the tables, the pages and the TRF file show, and what tells two players
apart: so it holds no control character (a newline would break the TRF line, an escape
the terminal), no invisible one (zero-width spaces and joiners make twins such as
"Ana" and "Ana" + U+200B; right-to-left overrides turn the text around), no space but
the plain one, and it fits TRF's 33-character name field. It is taken in Unicode's
composed form (NFC), with the spaces around it dropped.
"""

from __future__ import annotations

import unicodedata

from arbiter.tournament.errors import PlayerNameError

#: TRF's name field: columns 15-47.
MAX_NAME_LENGTH = 33

#: Unicode categories refused: control, format (zero-width, bidi controls), surrogate,
#: private use, unassigned, line and paragraph separators.
_REFUSED = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


def check_name(name: str) -> str:
    """The name as it will be kept (NFC, no surrounding spaces); PlayerNameError says
    what is wrong with one that cannot be (naming the character by its code point)."""
    clean = unicodedata.normalize("NFC", name).strip(" ")
    if not clean:
        raise PlayerNameError("a player's name is empty")
    for ch in clean:
        category = unicodedata.category(ch)
        if category in _REFUSED or (category == "Zs" and ch != " "):
            what = unicodedata.name(ch, "a control or invisible character")
            if category == "Cs":  # e.g. a byte the command line could not decode
                what = "a lone surrogate: half of a UTF-16 pair, not a character"
            raise PlayerNameError(
                f"{clean!r}: U+{ord(ch):04X} ({what}) cannot be in a player's name"
            )
    if len(clean) > MAX_NAME_LENGTH:
        raise PlayerNameError(
            f"{clean!r}: {len(clean)} characters, more than the {MAX_NAME_LENGTH} a TRF"
            " file holds"
        )
    return clean
