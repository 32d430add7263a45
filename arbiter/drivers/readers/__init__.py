"""Slot readers: hardware (or the simulator) that tells which token sits in which slot."""
