"""Running a tournament: players, pairings (round robin, Swiss), results and standings.

Pure standard library, no I/O beyond parsing CSV text: the hub keeps the
state (arbiter/hub/ledger.py) and calls these functions to pair and to rank.
"""
