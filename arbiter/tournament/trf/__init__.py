"""FIDE Tournament Report File (TRF-16) with the TRF(x) lines the pairing engines read.

Written: ``012`` the event's name, ``XXR`` the number of rounds, ``XXC white1`` or
``black1`` (the top seed's colour in the first round, as the games show it), then
one ``001`` line per player in seed order (the start rank is the pairing number):
start rank (columns 5-8), name (15-47), rating (49-52), points (81-84), rank
(86-89), and from column 92 one 10-character block a round: the opponent's start
rank (``0000`` without one), the colour (``w``, ``b``, ``-``) and the result
(``1``, ``=``, ``0``; ``+``/``-`` a forfeit won/lost, the game not played; ``U``
the pairing-allocated bye; ``F``, ``H``, ``Z`` a full-, half- or zero-point bye the
organiser gave; ``-`` with ``0000`` a round the player was not paired, and after
the last round a withdrawn player). Only rounds whose every game is settled are
written, and after them the byes already given for the next round: the file is
what an endorsed engine pairs the next round from.

Read: the same, and as Swiss-Manager and bbpPairings write it: any line ending
(CR, LF, CRLF), blank opponents, blank rounds (a late or absent player), ``W``,
``D``, ``L`` (games played but not rated), no ``XXR`` (then the rounds played).
Refused, naming the line: a start rank twice, more players than four digits
number, an ``XXR`` below 1, above MAX_ROUNDS or below the rounds played, a name that
breaks the rule of names.py, two players who disagree about their game; and a file
over MAX_FILE_BYTES, before it is read.
"""

from arbiter.tournament.trf.event import (
    MAX_FILE_BYTES,
    MAX_PLAYERS,
    MAX_ROUNDS,
    NAME_WIDTH,
    TrfEvent,
    complete_rounds,
)
from arbiter.tournament.trf.read import import_trf, read_trf_file
from arbiter.tournament.trf.write import export_trf

__all__ = ["MAX_FILE_BYTES", "MAX_PLAYERS", "MAX_ROUNDS", "NAME_WIDTH", "TrfEvent",
           "complete_rounds", "export_trf", "import_trf", "read_trf_file"]
