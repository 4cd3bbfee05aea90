"""What is still running: processes by a text in their command line, or by PID namespace."""

from __future__ import annotations

import os
from pathlib import Path


def processes_mentioning(text: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (
                    (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                )
            except OSError:
                continue
            if text in cmdline:
                found.append(f"{entry.name}: {cmdline}")
    return found


def in_namespaces(namespaces: set[str], started_by: float | None = None) -> list[str]:
    """The PIDs in those PID namespaces; with STARTED_BY (now_ticks() then), only processes that
    had started by then: a namespace's number is reused once it is freed, and another test's new
    host may get it."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "ns" / "pid") not in namespaces:
                    continue
                if started_by is not None and start_ticks(entry) > started_by:
                    continue
                found.append(entry.name)
            except (OSError, ValueError, IndexError):
                continue
    return found


def start_ticks(entry: Path) -> int:
    """A process's start, in clock ticks since boot (/proc/PID/stat's 22nd field)."""
    return int((entry / "stat").read_text().rpartition(")")[2].split()[19])


def now_ticks() -> float:
    """Now, in the clock ticks since boot that start_ticks counts."""
    return float(Path("/proc/uptime").read_text().split()[0]) * os.sysconf("SC_CLK_TCK")


def host_namespaces(workdir: str) -> set[str]:
    """The PID namespaces of the simulated hosts living under workdir (their init processes')."""
    inits = [
        line.split(":")[0]
        for line in processes_mentioning(workdir)
        if "sglconsole.sim.host.init" in line
    ]
    namespaces = set()
    for pid in inits:
        try:
            namespaces.add(os.readlink(f"/proc/{pid}/ns/pid"))
        except OSError:
            continue
    return namespaces - {os.readlink("/proc/self/ns/pid")}
