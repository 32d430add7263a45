"""The rules of the Game of the Generals: ranks, pieces, armies, contenders, verdicts, games.

The bottom layer, with :mod:`arbiter.tunes`: standard library only, imports nothing
else of the arbiter. Everything above judges through this package.
"""
