"""The tournament hub: the ledger of an event (:mod:`.ledger`, composed of a store and its
parts), its link to the broker (:mod:`.broker_link`) and its resend requests.

May import ``arbiter.tournament``, ``arbiter.rules``, ``arbiter.storage`` and
``arbiter.mqtt``; never the web, device or hardware layers (import-linter contract
``hub``). Its pages are :mod:`web.hub`.
"""
