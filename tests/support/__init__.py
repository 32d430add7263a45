"""Helpers shared by the test folders: waiting, fake clock, rigs, oracles, spawners.

Test modules import from here (or get fixtures from a conftest.py), never from
another test module.
"""
