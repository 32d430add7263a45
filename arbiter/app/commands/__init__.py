"""The ``gg-arbiter`` commands, one module per command or group, each owning its
subparser (``register``) beside its handler; :mod:`arbiter.app.cli` assembles them."""
