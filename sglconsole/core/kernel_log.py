"""Kernel log lines that come before an outage: GPU Xid / NVRM lines and the OOM killer's (pure).

Read from `dmesg --time-format iso` (`2026-12-05T21:40:01,123456+00:00 TEXT`) or
`journalctl -k -o short-iso` (`2026-12-05T21:40:01+0000 HOST kernel: TEXT`); other lines are
None. The words are the driver's and the kernel's own:

    NVRM: Xid (PCI:0000:18:00): 79, pid=4242, name=python3, GPU has fallen off the bus.
    NVRM: Xid (PCI:0000:18:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable ...
    Out of memory: Killed process 4242 (sglang::schedul) total-vm:..kB, anon-rss:123kB, ...
    Memory cgroup out of memory: Killed process 4242 (python3) ...

(the comm in the OOM line is cut at 15 characters, as the kernel keeps it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

XID = re.compile(r"NVRM: Xid \(PCI:(?P<bus>[0-9a-fA-F:.]+)\): (?P<xid>\d+), (?P<rest>.*)")
XID_PID = re.compile(r"pid=(?P<pid>\d+)")
XID_NAME = re.compile(r"name=(?P<name>[^,]*)")
OOM = re.compile(
    r"(?:Memory cgroup out of memory|Out of memory(?: \(oom_kill_allocating_task\))?): "
    r"Killed process (?P<pid>\d+) \((?P<comm>[^)]*)\)(?P<rest>.*)"
)
ANON_RSS = re.compile(r"anon-rss:(?P<kb>\d+)kB")
# the line before the kill names the victim's cgroup: a systemd unit (sglang-30001.service, as
# the console's systemd-run launches name it) says whose process it was even once it is gone
OOM_CONTEXT = re.compile(r"oom-kill:.*task_memcg=(?P<memcg>[^,]*),task=[^,]*,pid=(?P<pid>\d+)")
NVRM = re.compile(r"\bNVRM: ")
DMESG_ISO = re.compile(
    r"^(?P<stamp>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:,(?P<frac>\d+))?(?P<zone>[+-]\d\d:?\d\d) "
    r"(?P<text>.*)$"
)
JOURNAL_ISO = re.compile(
    r"^(?P<stamp>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(?P<frac>\d+))?(?P<zone>[+-]\d\d:?\d\d) "
    r"\S+ kernel: (?P<text>.*)$"
)


@dataclass(frozen=True, kw_only=True)
class KernelEvent:
    time: float | None
    """Epoch seconds the kernel logged it (None: the line did not say)."""
    kind: str
    """'xid', 'oom_kill', 'oom_context' (the cgroup of the kill to come) or 'nvrm' (another line
    of the NVIDIA driver)."""
    text: str
    pid: int | None = None
    """The process named: the one killed, or the one on the GPU for an Xid (often unknown)."""
    comm: str | None = None
    bus: str | None = None
    """The GPU's PCI bus of an Xid, as nvidia-smi's pci.bus_id ends: '18:00' (bus:device)."""
    xid: int | None = None
    rss_kb: int | None = None
    """The killed process's anon-rss, for an OOM kill."""
    memcg: str | None = None
    """The victim's cgroup ('oom_context': the OOM killer's line before the kill)."""

    @property
    def key(self) -> tuple:
        """The same line read twice (a restarted follow reprints the buffer) is one event."""
        return (self.time, self.text)


def parse_kernel_line(line: str) -> KernelEvent | None:
    """One line of dmesg or journalctl -k, or None when it is no precursor (or unreadable)."""
    if not isinstance(line, str):
        return None
    line = line.rstrip("\n")
    found = DMESG_ISO.match(line) or JOURNAL_ISO.match(line)
    when, text = (None, line) if found is None else (_epoch(found), found.group("text"))
    xid = XID.search(text)
    if xid:
        pid = XID_PID.search(xid.group("rest"))
        name = XID_NAME.search(xid.group("rest"))
        return KernelEvent(
            time=when,
            kind="xid",
            text=text,
            pid=int(pid.group("pid")) if pid else None,
            comm=name.group("name").strip() if name else None,
            bus=bus_key(xid.group("bus")),
            xid=int(xid.group("xid")),
        )
    oom = OOM.search(text)
    if oom:
        rss = ANON_RSS.search(oom.group("rest"))
        return KernelEvent(
            time=when,
            kind="oom_kill",
            text=text,
            pid=int(oom.group("pid")),
            comm=oom.group("comm"),
            rss_kb=int(rss.group("kb")) if rss else None,
        )
    context = OOM_CONTEXT.search(text)
    if context:
        return KernelEvent(
            time=when,
            kind="oom_context",
            text=text,
            pid=int(context.group("pid")),
            memcg=context.group("memcg"),
        )
    if NVRM.search(text):
        return KernelEvent(time=when, kind="nvrm", text=text)
    return None


def bus_key(bus: str | None) -> str | None:
    """'PCI:0000:18:00' / '0000:18:00' / '00000000:18:00.0' -> '18:00': how an Xid line and
    nvidia-smi's pci.bus_id name one GPU."""
    if not bus:
        return None
    parts = bus.removeprefix("PCI:").split(".")[0].split(":")
    return ":".join(part.lower() for part in parts[-2:]) if len(parts) >= 2 else None


def _epoch(found: re.Match) -> float | None:
    zone = found.group("zone").replace(":", "")
    try:
        moment = datetime.strptime(found.group("stamp") + zone, "%Y-%m-%dT%H:%M:%S%z")
    except ValueError:
        return None
    frac = found.group("frac")
    return moment.timestamp() + (float("0." + frac) if frac else 0.0)
