"""The web apps, side by side, and the kit they share.

- :mod:`web.table`: the table's status page, admin pages, simulator panel and API.
- :mod:`web.hub`: the tournament hub's venue pages, organiser pages and API.
- :mod:`web.kit`: what both use (PIN and sessions, serving with waitress, event
  streams, request bodies, security headers and error pages, game presentation).

The two apps never import each other, and the hub's app loads nothing of the
device or its hardware (import-linter contracts in ``pyproject.toml``).
"""
