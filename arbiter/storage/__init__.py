"""What the arbiter keeps on disk: the game journal, the RFID tag registry, data paths.

Above the rules: builds on :mod:`arbiter.rules`; standard library only, no hardware.
"""
