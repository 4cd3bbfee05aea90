"""The tests' container engines: a simulated SGLang server really runs inside a Docker and a
Podman container on a simulated host, and the host's own CLI, over real sshd, sees it with the
PIDs its /proc shows."""

from __future__ import annotations

import json
import subprocess

from sglconsole.core.containers import is_sglang, parse_inspect
from tests.containers import container_fleet  # noqa: F401


def _ssh(fleet, host, command: str) -> str:
    keys = fleet.workdir / "keys"
    argv = [
        "ssh",
        "-i",
        str(keys / "id_ed25519"),
        "-o",
        f"UserKnownHostsFile={keys / 'known_hosts'}",
    ]
    argv += ["-o", "BatchMode=yes", "-p", str(host.port), f"root@{host.address}", command]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_server_runs_in_a_container_the_hosts_cli_inspects(container_fleet):  # noqa: F811
    fleet = container_fleet
    (name,) = fleet.hosts
    host = fleet.hosts[name]
    kind = host.spec.engines[0]
    names = _ssh(fleet, host, f"{kind} ps --format '{{{{.Names}}}}'").split()
    assert names == ["sglang-30000"]
    (info,) = parse_inspect(_ssh(fleet, host, f"{kind} inspect sglang-30000"), kind)
    assert info.engine == kind and info.running and is_sglang(info)
    assert info.port == 30000 and info.options.network == "host"
    assert info.options.gpus == ("0",) and info.image_version == "0.5.23"
    # its main PID, as the engine reports it, is the server in the host's own /proc
    cmdline = _ssh(fleet, host, f"tr '\\0' ' ' < /proc/{info.pid}/cmdline")
    assert "sglang.launch_server" in cmdline and "--port 30000" in cmdline
    # and it answers on the host's loopback
    assert json.loads(_ssh(fleet, host, "curl -sf 127.0.0.1:30000/server_info"))["port"] == 30000
