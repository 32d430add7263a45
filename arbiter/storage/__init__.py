"""What the arbiter keeps on disk: the game journal, the RFID tag registry, data paths.

Layer 1: builds on :mod:`arbiter.rules`; standard library only, no hardware.
"""
