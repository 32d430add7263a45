"""Salpakan Arbiter: an electronic arbiter for the Game of the Generals.

The package is layered; each layer imports only from the layers below it
(``tests/test_layers.py`` and the import-linter contract in
``pyproject.toml`` enforce this)::

    app        config, assembly, service, CLI, consoles   (the only user of web/)
    device     the challenge sequence, status hub, enrollment, self-test
    hardware   slot readers, LEDs and buzzer, token identification
    storage    game journal, tag registry, data paths
    rules      ranks, pieces, verdicts, the game          } standard library only
    tunes      RTTTL, default tunes, WAV                  }

:mod:`arbiter.errors` holds :class:`~arbiter.errors.ArbiterError`, the root of
every error the arbiter raises on purpose. See ``docs/architecture.md``.
"""

__version__ = "0.1.0"
