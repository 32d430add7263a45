"""The tournament hub: the ledger of an event and (later) its MQTT ingest and pages.

May import ``arbiter.tournament``, ``arbiter.rules`` and ``arbiter.storage``;
never the web, device or hardware layers (import-linter contract ``hub``).
"""
