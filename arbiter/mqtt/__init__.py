"""The broker address and TLS set-up shared by a table's link and the hub.

Standard library and paho-mqtt only: ``arbiter.fleet`` (the table) and
``arbiter.hub`` both use it, so one URL means the same thing on both sides.
"""
