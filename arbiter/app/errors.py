"""The command line's errors: each is printed as one line, exit status 2."""

from __future__ import annotations

from arbiter.errors import ArbiterError


class CliError(ArbiterError):
    """A user error: printed as one line, exit status 2."""


class DataInUseError(CliError):
    """Another gg-arbiter (the running service) holds the data directory."""


class HubCliError(ArbiterError):
    """A hub command given wrong input: printed as one line."""


class BenchCommandError(ArbiterError, ValueError):
    """A bench command that cannot be carried out; the message says why."""


class ConfigError(ArbiterError, ValueError):
    """A config file that cannot be used; the message names the file and key."""


class EnrollReaderError(ArbiterError):
    """The slot reader failed during enrollment: the walk stops (it resumes next time)."""


class CheckStoppedError(ArbiterError):
    """A stop request (Ctrl-C, SIGTERM) or the end of input ended an interactive check."""
