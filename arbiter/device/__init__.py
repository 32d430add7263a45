"""The arbiter as a device: the challenge sequence over readers, signals and the record.

Layer 3: uses :mod:`arbiter.hardware` through its interfaces and
:mod:`arbiter.storage` for the record; never builds hardware itself.
"""
