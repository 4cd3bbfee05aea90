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


def in_namespaces(namespaces: set[str]) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "ns" / "pid") in namespaces:
                    found.append(entry.name)
            except OSError:
                continue
    return found


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
