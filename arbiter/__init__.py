"""Salpakan Arbiter: an electronic arbiter for the Game of the Generals.

The package is layered; each layer imports only from the layers below it
(``tests/test_layers.py`` and the import-linter contracts in
``pyproject.toml`` enforce this). A table, top to bottom::

    app        config, assembly, service, CLI, consoles   (the only user of web/)
    web/table  the table's Flask app (outside this package, beside web/hub)
    web/kit    what both web apps share
    device     the challenge sequence, status hub, enrollment, self-test
    fleet      the table's broker link: outbox, assignment, resend
    hardware   slot readers, LEDs and buzzer, token identification
    storage    game journal, tag registry, data paths
    rules      ranks, pieces, verdicts, the game          } standard library only
    tunes      RTTTL, default tunes, WAV                  }

The tournament hub: ``hub`` (ledger, MQTT ingest) over ``tournament``
(pairings, standings), served by ``web/hub``; ``mqtt`` (broker URLs, TLS) is
shared by table and hub.

:mod:`arbiter.errors` holds :class:`~arbiter.errors.ArbiterError`, the root of
every error the arbiter raises on purpose; :mod:`arbiter.queues` the bounded
queue every stream uses. See ``docs/architecture.md``.
"""

__version__ = "0.1.0"
