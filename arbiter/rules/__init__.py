"""The rules of the Game of the Generals: ranks, pieces, armies, contenders, verdicts, games.

Layer 0, with :mod:`arbiter.tunes`: standard library only, imports nothing
else of the arbiter. Everything above judges through this package.
"""
