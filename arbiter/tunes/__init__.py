"""Tunes: RTTTL parsing, the default tunes and WAV rendering.

The bottom layer, with :mod:`arbiter.rules`: standard library only.
"""
