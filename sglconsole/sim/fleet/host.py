"""One started simulated host, seen from outside: its paths, its processes, its signals."""

from __future__ import annotations

import os
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

from sglconsole.sim.fleet.specs import HostSpec


@dataclass
class SimHost:
    spec: HostSpec
    root: Path
    address: str
    port: int
    layout: str | None
    sock: socket.socket
    ssh_mode: str
    namespaced: bool
    process: subprocess.Popen | None = None

    def seen(self, relative: str) -> str:
        """A path as processes on the host see it (e.g. 'logs/x.log' -> '/srv/logs/x.log')."""
        head, _, rest = relative.partition("/")
        if self.layout:
            name = {"env": "ml-env"}.get(head, head)
            return f"{self.layout}/{name}/{rest}".rstrip("/")
        return str(self.root / relative)

    @property
    def python(self) -> str:
        return self.seen("env/bin/python3")

    def pids(self, comm: str | None = None) -> list[int]:
        """PIDs (as this machine sees them) of the host's processes, optionally by command name."""
        namespace = self._namespace()
        if namespace is None:
            return []
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if os.readlink(entry / "ns" / "pid") != namespace:
                    continue
                if comm is None or (entry / "comm").read_text().strip() == comm:
                    found.append(int(entry.name))
            except OSError:
                continue
        return found

    def _namespace(self) -> str | None:
        if self.process is None or self.process.poll() is not None:
            return None
        try:
            children = (
                Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
                .read_text()
                .split()
            )
            return os.readlink(f"/proc/{children[0]}/ns/pid") if children else None
        except OSError:
            return None

    def signal_ssh(self, sig: int) -> list[int]:
        """Signal this host's SSH server: its sshd processes and the daemon accepting
        connections."""
        targets = self.pids("sshd") + [
            pid for pid in self.pids() if b"sglconsole.sim.host.hostd" in _cmdline(pid)
        ]
        for pid in targets:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        return targets

    def signal_all(self, sig: int) -> None:
        """Signal every process of this host (its namespace init's process group and below)."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, sig)


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
