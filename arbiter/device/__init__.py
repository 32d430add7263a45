"""The arbiter as a device: the challenge sequence over readers, signals and the record.

Below the table's web app: uses :mod:`arbiter.drivers` through its interfaces and
:mod:`arbiter.storage` for the record; never builds hardware itself.

- ``arbiter``: :class:`Arbiter`, the owner of the worker thread, composing the parts;
- ``worker``: the one thread that handles readings and commands in order;
- ``sequence``: the challenge sequence (the state machine over both slots);
- ``judge``: the seated pair identified, checked and recorded;
- ``status``: the public status, its subscribers, and the outputs' watchers;
- ``enrollment``: guided tag enrollment and the device's enrollment mode;
- ``selftest``: the self-test;
- ``protocol``: the typed seams (``DeviceView`` for the web, ``DeviceConfig``);
- ``errors``: ``DeviceError``.
"""
