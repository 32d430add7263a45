"""Slot readers: hardware that tells which piece sits in which slot."""
