"""One-shot looks at a host (for actions and one-shot commands).

The watcher agent in `once` mode: one process scan, one compute-apps query,
plus one GPU query, over the host's existing SSH connection.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

import httpx

from sglconsole.core.nvidia_smi import (
    GPU_QUERY_FIELDS,
    ComputeApp,
    GpuSample,
    gpu_query_args,
    parse_compute_apps,
    parse_gpu_csv,
)
from sglconsole.core.processes import ProcessView, ProcInfo, ServerProcess, analyse
from sglconsole.errors import RemoteCommandFailed
from sglconsole.remote.agents import source
from sglconsole.remote.ssh.connection import SshHost


@dataclass
class Snapshot:
    procs: list[ProcInfo]
    apps: list[ComputeApp]
    gpus: list[GpuSample]
    ports: list[int]
    view: ProcessView

    def server(self, port: int) -> ServerProcess | None:
        return next((server for server in self.view.servers if server.port == port), None)

    def proc(self, pid: int) -> ProcInfo | None:
        return next((proc for proc in self.procs if proc.pid == pid), None)


async def snapshot(
    ssh: SshHost, python: str, env_names: list[str] | tuple[str, ...] = (), gpus: bool = True
) -> Snapshot:
    args = json.dumps({"once": True, "env_names": list(env_names)})
    scan, query = await asyncio.gather(
        ssh.run([python, "-c", source("watcher_agent"), args], timeout=30),
        ssh.run(["nvidia-smi", *gpu_query_args(GPU_QUERY_FIELDS)], timeout=30)
        if gpus
        else _nothing(),
    )
    if not scan.ok:
        raise RemoteCommandFailed(
            ssh.name, [python, "-c", "<sglconsole watcher>"], scan.exit_status, scan.stderr
        )
    procs: list[ProcInfo] = []
    apps: list[ComputeApp] = []
    ports: list[int] = []
    for line in scan.stdout.splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if message.get("t") == "apps" and message.get("rc") == 0:
            apps = parse_compute_apps(message.get("out") or "")
        elif message.get("t") == "procs":
            procs = [
                proc
                for proc in (ProcInfo.from_json(record) for record in message.get("procs") or [])
                if proc is not None
            ]
            ports = [int(port) for port in message.get("ports") or []]
    gpu_list = parse_gpu_csv(query.stdout) if query is not None and query.ok else []
    return Snapshot(procs, apps, gpu_list, ports, analyse(procs, apps, gpu_list))


async def _nothing():
    return None


async def first_json(get, paths: tuple[str, ...]) -> dict | None:
    """The first of `paths` answering 200 with a JSON object (`get(path)` -> response or None)."""
    for path in paths:
        response = await get(path)
        if response is not None and response.status_code == 200:
            try:
                data = response.json()
            except ValueError:
                return None
            return data if isinstance(data, dict) else None
    return None


async def http_json(
    ssh: SshHost, address: str, port: int, paths: tuple[str, ...], timeout: float = 5.0
) -> dict | None:
    """GET the first of `paths` that answers 200 with a JSON object, through a port forward."""
    endpoint = await ssh.forward(port, address)
    async with endpoint.client(timeout=timeout) as client:

        async def get(path: str):
            try:
                return await client.get(path)
            except httpx.HTTPError:
                return None

        return await first_json(get, paths)


INFO_PATHS = ("/server_info", "/get_server_info")  # the second for SGLang before 0.5.10


async def server_info(ssh: SshHost, address: str, port: int) -> dict | None:
    return await http_json(ssh, address, port, INFO_PATHS)
