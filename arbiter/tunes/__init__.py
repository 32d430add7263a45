"""Tunes: RTTTL parsing, the default tunes and WAV rendering.

Layer 0, with :mod:`arbiter.rules`: standard library only.
"""
