"""Start K simulated GPU hosts and write the hosts.yaml that reaches them.

Each host is its own machine as far as anything on it can tell: its own PID,
network and mount namespaces (``unshare``), so ``ps``, ``/proc`` and port
30000 on one host show only that host. Its SSH server listens on a socket
bound outside, on the host's own loopback address, and inherited by fd.
Where namespaces are not allowed, a single host runs without them.

The parts: the specs (``fleet_specs``), one started host (``fleet_host``), its
processes (``fleet_process``) and the files that reach it (``fleet_files``).
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from sglconsole.sim.fleet import engines as fleet_engines
from sglconsole.sim.fleet import files as fleet_files
from sglconsole.sim.fleet.host import SimHost
from sglconsole.sim.fleet.process import (
    LAYOUT_CANDIDATES,
    launch,
    layout_dir,
    namespaces_work,
    read_text,
    wait_banner,
)
from sglconsole.sim.fleet.specs import HostSpec, ServerSpec
from sglconsole.sim.host.root import create_host

__all__ = [
    "LAYOUT_CANDIDATES",
    "HostSpec",
    "ServerSpec",
    "SimFleet",
    "SimHost",
]

_NO_NAMESPACES = (
    "Linux user namespaces are not available here, so the demo runs one simulated host "
    "without isolation: it shares this machine's /etc and processes (what you run on it "
    "runs here). Enable them with: "
    "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 "
    "(Ubuntu 24.04) or kernel.unprivileged_userns_clone=1"
)


class SimFleet:
    def __init__(
        self,
        workdir: str | os.PathLike,
        hosts: list[HostSpec],
        profiles: dict,
        *,
        ssh: str = "auto",
        namespaces: bool | None = None,
        extra_config: dict | None = None,
    ):
        self.workdir = Path(workdir).resolve()
        self.specs = hosts
        self.profiles = profiles
        self.ssh_mode = (
            ssh
            if ssh != "auto"
            else ("sshd" if os.geteuid() == 0 and shutil.which("sshd") else "asyncssh")
        )
        self.namespaces = namespaces_work() if namespaces is None else namespaces
        self.extra_config = extra_config or {}
        self.hosts: dict[str, SimHost] = {}
        self.config_path = self.workdir / "hosts.yaml"
        self.warning: str | None = None
        self.engines: dict[tuple[str, str], fleet_engines.HostEngine] = {}
        """(host name, "docker"|"podman") -> that host's running engine."""
        self.notes: list[str] = []
        """One line for each container engine a host has but this machine could not start."""

    # ------------------------------------------------------------ lifecycle

    def start(self, timeout: float = 60.0) -> Path:
        # generous: on a machine just booted, or busy writing a large venv, one run waited 15+ s
        self.workdir.mkdir(parents=True, exist_ok=True)
        specs = self.specs
        if not self.namespaces:
            self.warning = _NO_NAMESPACES
            specs = specs[:1]
        for spec in specs:
            if spec.login_shell and self.ssh_mode == "sshd" and not self.namespaces:
                raise RuntimeError(
                    f"simulated host {spec.name}: a login shell of its own needs the host's own "
                    "mount namespace (its own /etc/passwd), and namespaces are not available"
                )
        try:
            client_key = fleet_files.client_key(self.workdir)
            second = random.randint(100, 250)
            for index, spec in enumerate(specs):
                address = f"127.{second}.{random.randint(0, 255)}.{index + 2}"
                self.hosts[spec.name] = self._prepare(spec, address, client_key)
            for host in self.hosts.values():
                launch(host)
            deadline = time.monotonic() + timeout
            for host in self.hosts.values():
                wait_banner(host, deadline)
            for name, host in self.hosts.items():
                started, notes = fleet_engines.boot(host)
                self.engines.update({(name, kind): engine for kind, engine in started.items()})
                self.notes += notes
            fleet_files.write_config(
                self.config_path, self.workdir, self.hosts, self.profiles, self.extra_config
            )
        except BaseException:
            self.stop()  # a fleet that cannot start leaves none of its hosts behind
            raise
        return self.config_path

    def wait_ready(self, timeout: float = 30.0) -> None:
        """Until every server left running at boot has logged SGLang's ready line."""
        deadline = time.monotonic() + timeout
        for host in self.hosts.values():
            for server in host.spec.servers:
                if server.running is None:
                    continue
                if server.container:
                    self._wait_container(host, server, deadline)
                    continue
                log = host.root / "logs" / f"sglang-{server.port}.log"
                while "The server is fired up and ready to roll!" not in read_text(log):
                    if time.monotonic() > deadline:
                        raise RuntimeError(
                            f"{host.spec.name}:{server.port} not ready:\n{read_text(log)[-1500:]}"
                        )
                    time.sleep(0.1)

    def _wait_container(self, host: SimHost, server: ServerSpec, deadline: float) -> None:
        engine = self.engines.get((host.spec.name, server.container or ""))
        if engine is None:
            return  # this machine has no such engine: the server is not there (self.notes)
        name = fleet_engines.container_name(server.port)
        while not fleet_engines.is_ready(engine, name):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{host.spec.name}:{server.port} ({name}) not ready")
            time.sleep(0.2)

    def engine(self, host: str, kind: str) -> fleet_engines.HostEngine:
        return self.engines[(host, kind)]

    def stop(self) -> None:
        """Every host's processes ended (idempotent; safe on a fleet that only partly started)."""
        for engine in self.engines.values():  # before the hosts: the daemons stop their containers
            fleet_engines.stop_engine(engine)
        self.engines.clear()
        for host in self.hosts.values():
            host.signal_all(signal.SIGTERM)
        deadline = time.monotonic() + 5
        for host in self.hosts.values():
            if host.process is not None:
                try:
                    host.process.wait(max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    host.signal_all(signal.SIGKILL)
                    host.process.wait()
            host.sock.close()

    def __enter__(self) -> SimFleet:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # -------------------------------------------------------------- faults

    def reboot(self, name: str, down_for: float = 0.0) -> None:
        """Every process of the host gone; SSH (and the boot servers) back after `down_for` s."""
        host = self.hosts[name]
        host.signal_all(signal.SIGKILL)
        host.process.wait()
        for path in (host.root / "sim" / "gpu").glob("*.json"):
            path.unlink(missing_ok=True)
        time.sleep(down_for)
        launch(host)
        wait_banner(host, time.monotonic() + 15)

    # ------------------------------------------------------------- building

    def _prepare(self, spec: HostSpec, address: str, client_key: Path) -> SimHost:
        root = create_host(
            self.workdir / spec.name,
            gpu_model=spec.gpu_model,
            gpu_count=spec.gpu_count,
            sglang_version=spec.sglang_version,
            pid_offset=spec.pid_offset,
            models=spec.models,
            sglang=spec.sglang,
        )
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address, 0))
        sock.listen(128)
        layout = layout_dir(self.workdir) if self.namespaces else None
        host = SimHost(
            spec, root, address, sock.getsockname()[1], layout, sock, self.ssh_mode, self.namespaces
        )
        fleet_files.host_keys(self.workdir, host, client_key)
        fleet_files.host_files(host)
        fleet_files.boot_file(host, self.profiles)
        fleet_files.unit_files(host)
        return host
