"""The application: config, assembly of a device from it, the service, the CLI, consoles.

The top layer: the only part of :mod:`arbiter` that imports the web apps
(:mod:`web.table` for ``run``, :mod:`web.hub` for ``hub``).
"""
