"""The tournament hub: the ledger of an event, its MQTT ingest and its resend requests.

May import ``arbiter.tournament``, ``arbiter.rules``, ``arbiter.storage`` and
``arbiter.mqtt``; never the web, device or hardware layers (import-linter contract
``hub``). Its pages are :mod:`web.hub`.
"""
