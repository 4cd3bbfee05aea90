"""Test helpers: Debian's real Prometheus on loopback with a generated config, and SSH port
forwards that make the simulated servers' /metrics reachable at "HOST_ADDRESS:PORT" from outside
their host's network namespace (as a real server is at its host's address)."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest

from sglconsole.config import Config
from sglconsole.remote.ssh.connection import SshFleet

NO_PROMETHEUS = (
    "Debian's prometheus package is not installed (./dev test and .ci/run install it where apt "
    "has it: apt-get install prometheus)"
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Prometheus:
    """A real Prometheus scraping `targets` (job name -> ["address:port", ...]) every second."""

    def __init__(self, workdir: Path, targets: dict[str, list[str]], port: int | None = None):
        binary = shutil.which("prometheus")
        if binary is None:
            pytest.skip(NO_PROMETHEUS)
        workdir.mkdir(parents=True, exist_ok=True)
        config = workdir / "prometheus.yml"
        jobs = "".join(
            f"  - job_name: {json.dumps(job)}\n"
            f"    static_configs: [{{targets: {json.dumps(addresses)}}}]\n"
            for job, addresses in targets.items()
        )
        config.write_text(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
            f"scrape_configs:\n{jobs}"
        )
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = workdir / "prometheus.log"
        self.process = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=self.log.open("w"),
        )
        deadline = time.monotonic() + 30
        while True:
            assert self.process.poll() is None, self.log.read_text()
            try:
                if httpx.get(self.url + "/-/ready", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, self.log.read_text()
            time.sleep(0.2)

    def query(self, promql: str) -> list[dict]:
        reply = httpx.get(self.url + "/api/v1/query", params={"query": promql}, timeout=10)
        body = reply.json()
        assert body["status"] == "success", body
        return body["data"]["result"]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Forwards:
    """host address:port (outside) -> the server's port inside its host, over the console's own
    SSH code, on an event loop of their own (Prometheus scrapes them from another process). One
    SSH connection each: closing it cuts the connections Prometheus keeps alive through it."""

    def __init__(self, config: Config):
        self.config = config
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.connections: dict[str, SshFleet] = {}

    def open(self, host: str, port: int, outside: int | None = None) -> str:
        """ "address:port" (or :outside) that reaches HOST's server on `port`."""
        address = self.config.host(host).address
        server = self.config.find_server(host, port)
        dest = server.http_address if server else "127.0.0.1"
        outside = outside or port
        ssh = SshFleet(self.config.hosts)

        async def forward():
            conn = await ssh[host].connect()
            await conn.forward_local_port(address, outside, dest, port)

        asyncio.run_coroutine_threadsafe(forward(), self.loop).result(30)
        key = f"{address}:{outside}"
        self.connections[key] = ssh
        return key

    def dcgm(self, host: str, port: int = 9400) -> str:
        """The simulator's dcgm-exporter run on HOST (on a terminal: it gets SIGHUP when its
        connection closes) and reachable at "address:port"."""
        address = self.config.host(host).address
        ssh = SshFleet(self.config.hosts)

        async def start():
            conn = await ssh[host].connect()
            wire = ssh[host].wire(["dcgm-exporter", "-a", f"127.0.0.1:{port}"])
            await conn.create_process(wire, term_type="dumb")
            await conn.forward_local_port(address, port, "127.0.0.1", port)

        asyncio.run_coroutine_threadsafe(start(), self.loop).result(30)
        key = f"{address}:{port}"
        self.connections[key] = ssh
        return key

    def close(self, key: str) -> None:
        ssh = self.connections.pop(key)
        asyncio.run_coroutine_threadsafe(ssh.close(), self.loop).result(30)

    def stop(self) -> None:
        for key in list(self.connections):
            self.close(key)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
