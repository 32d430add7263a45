"""The application: config, assembly of a device from it, the service, the CLI, consoles.

Layer 4, the top: the only part of :mod:`arbiter` that imports :mod:`web`.
"""
