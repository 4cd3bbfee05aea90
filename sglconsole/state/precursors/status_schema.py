"""The shape of the signs before an outage in `status --json` (status_json writes them;
state.status_schema puts them in a host and a server)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class StatusMemory(_Model):
    """The host's MemAvailable, read by the watcher every `memory_interval` (schema 1.5)."""

    available_mib: float | None = None
    total_mib: float | None = None
    read_at: float | None = None
    """Unix time of the newest reading (null: none yet, or not read: memory_interval 0)."""
    slope_mib_min: float | None = None
    """Least-squares slope over the last 30 min, MiB per minute (negative: falling)."""
    steady: bool = False
    """The trend explains the readings (R² >= 0.8 over 45 s and 5 readings at least)."""
    oom_eta_s: int | None = None
    """Seconds until MemAvailable reaches 0 at this slope: only when steady and falling."""
    error: str | None = None


class StatusKernelEvent(_Model):
    kind: str
    """xid, oom_kill or nvrm (another NVIDIA driver line)."""
    time: float | None = None
    """Unix time the kernel logged it."""
    text: str
    """What it means, in words."""
    line: str
    """The kernel's own line."""
    pid: int | None = None
    xid: int | None = None
    ports: list[int] = []
    """The servers on this host it hit (by the pid, else by the Xid's GPU); empty: none known."""


class StatusKernelLog(_Model):
    source: str | None = None
    """dmesg or journalctl -k while followed; null: not read."""
    error: str | None = None
    """Why not: e.g. this login may not read the kernel log (dmesg_restrict, no journal group)."""
    events: list[StatusKernelEvent] = []


class StatusGpuHealth(_Model):
    """nvidia-smi's ECC and row-remap counters of one GPU (null: the GPU cannot say)."""

    index: int
    ecc_corrected: int | None = None
    ecc_uncorrected: int | None = None
    remapped_correctable: int | None = None
    remapped_uncorrectable: int | None = None
    remap_pending: bool | None = None
    remap_failure: bool | None = None


class StatusSign(_Model):
    """A sign before an outage now: host memory running out, an OOM kill or an Xid in the last
    hour, ECC counters risen while watched."""

    kind: str
    """host_memory, oom_kill, xid or ecc."""
    port: int | None = None
    """The server it hits (null: the host's own, or no server known)."""
    text: str
    time: float | None = None
