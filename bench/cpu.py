"""CPU time as the benches count it, in one place: a process's own (with its reaped children),
read from inside it (getrusage) or from outside it (/proc/PID/stat), and the machine's load."""

from __future__ import annotations

import os
import resource
from pathlib import Path

HZ = os.sysconf("SC_CLK_TCK")


def own_cpu_s(children: bool = True) -> float:
    """CPU seconds of this process (user + system), and of its reaped children if asked."""
    who = [resource.RUSAGE_SELF] + ([resource.RUSAGE_CHILDREN] if children else [])
    return sum(u.ru_utime + u.ru_stime for u in map(resource.getrusage, who))


def proc_stat(pid: int, children: bool = True) -> tuple[int, float] | None:
    """(parent pid, CPU seconds: utime + stime, and its reaped children's unless CHILDREN is
    False) of any process; None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text.rpartition(")")[2].split()
    return int(fields[1]), sum(int(v) for v in fields[11 : 15 if children else 13]) / HZ


def process_cpu_s(pid: int) -> float | None:
    stat = proc_stat(pid)
    return None if stat is None else stat[1]


def load() -> dict:
    """What else ran meanwhile: the numbers of a shared machine are only as good as this."""
    one, five, fifteen = os.getloadavg()
    return {"cpus": os.cpu_count(), "loadavg_1_5_15": [one, five, fifteen]}
