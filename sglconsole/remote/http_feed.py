"""The HTTP feed of one host: every running server's health, /metrics and server info, polled
every 5 s through the SSH port forward (a server that just appeared is asked at once).

One HTTP client per forward socket (its connections are kept between polls); a socket replaced
after a reconnect gets a new client and the old one is closed."""

from __future__ import annotations

import asyncio
import time

import httpx

from sglconsole.core.metrics import parse_metrics
from sglconsole.remote.drift_feed import DriftFeed
from sglconsole.remote.endpoint import Endpoint
from sglconsole.remote.host_link import HostLink
from sglconsole.remote.inspect import INFO_PATHS, first_json
from sglconsole.state.fleet import ServerState

HTTP_INTERVAL_S = 5.0
INFO_REFRESH_S = 60.0


class HttpFeed:
    def __init__(self, link: HostLink, drift: DriftFeed):
        self.link = link
        self.drift = drift
        self._clients: dict[int, tuple[Endpoint, httpx.AsyncClient]] = {}  # per port
        # per port, each forgotten when another process takes the port:
        self.info_at: dict[int, float] = {}
        self.ready_path: dict[int, str] = {}
        self.alive_path: dict[int, str] = {}
        self.no_metrics: set[int] = set()  # answered /metrics with 404 (no --enable-metrics)
        self.new_server = asyncio.Event()

    async def close(self) -> None:
        clients, self._clients = self._clients, {}
        for _endpoint, client in clients.values():
            await client.aclose()

    def new_process(self, port: int) -> None:
        """Another process serves PORT: what was learnt of the last one no longer holds."""
        self.new_server.set()
        self.info_at.pop(port, None)
        self.ready_path.pop(port, None)
        self.alive_path.pop(port, None)
        self.no_metrics.discard(port)

    async def run(self) -> None:
        while True:
            self.new_server.clear()
            servers = [s for s in self.link.state.servers.values() if s.process is not None]
            await asyncio.gather(*(self._poll(s) for s in servers))
            try:  # a server that just appeared is asked at once, not at the next interval
                await asyncio.wait_for(self.new_server.wait(), HTTP_INTERVAL_S)
            except TimeoutError:
                pass

    async def _poll(self, server: ServerState) -> None:
        address = server.config.http_address if server.config else "127.0.0.1"
        http = await self._client(server.port, await self.link.ssh.forward(server.port, address))
        checked, health = await self._health(http, server)
        answer = server.health
        if checked:
            ok = health is not None and health.status_code == 200
            answer = "ok" if ok else _describe(health)
        if answer == "ok" and server.port not in self.no_metrics:
            # before health is set: a one-shot status sees both or neither
            await self._metrics(http, server)
        server.health = answer
        if answer == "ok":
            server.answered_at = time.time()
        stale = time.time() - self.info_at.get(server.port, 0) > INFO_REFRESH_S
        if server.health == "ok" and stale:
            info = await first_json(lambda path: self._get(http, path), INFO_PATHS)
            if info is not None:
                server.server_info = info
                version = info.get("version")
                server.version = str(version) if version is not None else None
                self.info_at[server.port] = time.time()
                if server.drift is None and server.managed:
                    await self.drift.check(server)
        self.link.changed(server.port)

    async def _client(self, port: int, endpoint: Endpoint) -> httpx.AsyncClient:
        known = self._clients.get(port)
        if known is not None and known[0] == endpoint:
            return known[1]
        if known is not None:
            await known[1].aclose()
        client = endpoint.client(timeout=httpx.Timeout(5.0))
        self._clients[port] = (endpoint, client)
        return client

    async def _metrics(self, http: httpx.AsyncClient, server: ServerState) -> None:
        """SGLang's /metrics (only with --enable-metrics; a 404 is remembered for this process)."""
        response = await self._get(http, "/metrics")
        if response is None:
            return
        if response.status_code == 404:
            self.no_metrics.add(server.port)
        elif response.status_code == 200:
            server.metrics_before, server.metrics_before_at = server.metrics, server.metrics_at
            server.metrics = parse_metrics(response.text)
            server.metrics_at = time.time()

    async def _health(
        self, http: httpx.AsyncClient, server: ServerState
    ) -> tuple[bool, httpx.Response | None]:
        """(checked, response). /ready where the server has it (0.5.23+); else /health, which makes
        SGLang generate a token (and log a prefill line), so only until it answers 200 for this
        process — after that, a cheap /model_info proves the server still answers."""
        if self.ready_path.get(server.port) != "/health":
            response = await self._get(http, "/ready")
            if response is None or response.status_code != 404:
                self.ready_path[server.port] = "/ready"
                return True, response
            self.ready_path[server.port] = "/health"
        if server.health == "ok":
            alive = await self._alive(http, server.port)
            answered = alive is not None and alive.status_code == 200
            return (False, None) if answered else (True, alive)
        return True, await self._get(http, "/health")

    async def _alive(self, http: httpx.AsyncClient, port: int) -> httpx.Response | None:
        """/model_info (0.5.10+); /get_model_info only where that is missing: from 0.5.10 on SGLang
        logs a deprecation warning for every /get_model_info call (seen on a real 0.5.12)."""
        path = self.alive_path.get(port, "/model_info")
        response = await self._get(http, path)
        if response is not None and response.status_code == 404 and path == "/model_info":
            self.alive_path[port] = "/get_model_info"
            response = await self._get(http, "/get_model_info")
        return response

    @staticmethod
    async def _get(client: httpx.AsyncClient, path: str) -> httpx.Response | None:
        try:
            return await client.get(path)
        except httpx.HTTPError:
            return None


def _describe(response: httpx.Response | None) -> str:
    if response is None:
        return "no HTTP answer"
    if response.status_code == 503:
        return "starting (503)"
    return f"HTTP {response.status_code}"
