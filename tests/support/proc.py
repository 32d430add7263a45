"""What Linux says of a process in /proc: its CPU time and its memory (for benchmarks)."""

from __future__ import annotations

import os
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds the process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICKS  # utime + stime


def status(pid: int) -> dict[str, str]:
    """The fields of /proc/PID/status (VmRSS, VmHWM, Threads...), as written there."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        fields[name] = value.strip()
    return fields


def memory_mb(pid: int, field: str = "VmRSS") -> float:
    """A memory field of /proc/PID/status in MB (VmRSS: resident now; VmHWM: its peak)."""
    return int(status(pid)[field].split()[0]) / 1024
