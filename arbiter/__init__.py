"""Salpakan Arbiter: an electronic arbiter for the Game of the Generals.

The rules core (:mod:`arbiter.ranks`, :mod:`arbiter.pieces`,
:mod:`arbiter.verdict`, :mod:`arbiter.game`, :mod:`arbiter.journal`,
:mod:`arbiter.rtttl`) is pure standard library; hardware lives behind small
interfaces in :mod:`arbiter.readers` and :mod:`arbiter.signals`.
"""

__version__ = "0.1.0"
