"""An SGLang router's worker API (sglang-router 0.3.x and the SMG gateway), and a server's
running requests.

The router lists its workers at ``GET /workers`` (each with an ``id``, its ``url`` and
``is_healthy``), takes one out with ``DELETE /workers/{id}`` (the id, not the URL) and queues
one in with ``POST /workers {"url": ..., "worker_type": "regular"}``: both answer 202 and the
worker is listed once the router has checked it. The SMG gateway runs each change as a job and
answers the POST with the new worker's generated id; ``GET /workers/{id}`` then shows the job
(``job_status``, a failed one with its message) until the worker is registered
(model_gateway/src/worker/service.rs). It may require an admin bearer token (``--api-key`` or
``--control-plane-api-keys``; server.rs guards the worker routes with it). A router on an SSH
host is reached through an SSH port forward (a private local socket), like the servers; one
given by `url:` directly.
"""

from __future__ import annotations

import asyncio
import time

import httpx

from sglconsole.config import Router
from sglconsole.errors import RemoteError
from sglconsole.remote.endpoint import Endpoint
from sglconsole.remote.load_reader import LoadAnswer, load_of
from sglconsole.remote.router.gateway import admin_token
from sglconsole.remote.ssh.connection import SshFleet


class RouterError(RemoteError):
    def __init__(self, router: str, message: str):
        super().__init__(f"router {router}", message)


async def router_endpoint(fleet: SshFleet, router: Router) -> Endpoint:
    """The router as this console reaches it."""
    if router.url:
        return Endpoint(router.url.rstrip("/"))
    return await fleet[router.host].forward(router.port)


async def router_client(fleet: SshFleet, name: str, router: Router, **options) -> RouterClient:
    """The client for ROUTER as hosts.yaml says it: its endpoint and its admin token."""
    token = admin_token(name, router.admin_token)
    return RouterClient(name, await router_endpoint(fleet, router), token=token, **options)


class RouterClient:
    def __init__(
        self, name: str, endpoint: Endpoint, timeout: float = 10, token: str | None = None
    ):
        self.name = name
        self.endpoint = endpoint
        self.timeout = timeout
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}

    async def _request(self, method: str, path: str, **kwargs) -> httpx.Response:
        try:
            async with self.endpoint.client(timeout=self.timeout) as client:
                response = await client.request(method, path, headers=self.headers, **kwargs)
        except httpx.HTTPError as exc:
            raise RouterError(
                self.name, f"at {self.endpoint}: {type(exc).__name__} {exc}".strip()
            ) from None
        if response.status_code in (401, 403):  # the gateway's admin routes want a token
            said = "refused the admin token" if self.headers else "wants an admin token"
            raise RouterError(
                self.name, f"{said} ({response.status_code}): set admin_token: ${{VAR}}"
            )
        return response

    async def workers(self) -> list[dict]:
        response = await self._request("GET", "/workers")
        try:
            rows = response.json().get("workers")
        except (ValueError, AttributeError):
            rows = None
        if response.status_code != 200 or not isinstance(rows, list):
            raise RouterError(
                self.name, f"GET /workers answered {response.status_code}: {response.text[:200]}"
            )
        return [row for row in rows if isinstance(row, dict)]

    async def find(self, url: str) -> dict | None:
        return next(
            (worker for worker in await self.workers() if same_url(worker.get("url"), url)), None
        )

    async def remove(self, url: str) -> bool:
        """Take URL out; False if the router did not have it."""
        worker = await self.find(url)
        if worker is None:
            return False
        response = await self._request("DELETE", f"/workers/{worker['id']}")
        if response.status_code not in (200, 202, 204):
            raise RouterError(
                self.name, f"removing {url} answered {response.status_code}: {response.text[:200]}"
            )
        deadline = time.monotonic() + self.timeout
        while await self.find(url) is not None:  # the removal is queued: see it done
            if time.monotonic() > deadline:
                raise RouterError(self.name, f"still lists {url} {self.timeout:g}s later")
            await asyncio.sleep(0.1)
        return True

    async def add(self, url: str, timeout: float = 60) -> dict:
        """Put URL in and wait until the router lists it healthy (the gateway: its job done)."""
        body = {"url": url, "worker_type": "regular"}
        response = await self._request("POST", "/workers", json=body)
        if response.status_code not in (200, 201, 202):
            raise RouterError(
                self.name, f"adding {url} answered {response.status_code}: {response.text[:200]}"
            )
        try:
            queued = response.json().get("worker_id")
        except (ValueError, AttributeError):
            queued = None
        deadline = time.monotonic() + timeout
        while True:
            worker = await self.find(url)
            if worker is not None and worker.get("is_healthy", True):
                return worker
            job = await self.job(queued) if queued and worker is None else {}
            if job.get("status") == "failed":
                raise RouterError(self.name, f"adding {url} failed: {job.get('message')}")
            if time.monotonic() > deadline:
                state = "listed but unhealthy" if worker else "not listed"
                said = f"{url} {state} after {timeout:g}s"
                if job:  # the gateway still tries: call it off, so that it stays out as said
                    await self._request("DELETE", f"/workers/{queued}")
                    said += f" (its add job was still {job.get('status')}: called off)"
                raise RouterError(self.name, said)
            await asyncio.sleep(0.2)

    async def job(self, worker_id: str) -> dict:
        """The gateway's job for WORKER_ID (`status`: pending, processing, failed; `message`);
        empty for a router that keeps no jobs (GET /workers/{id}: job_status, service.rs)."""
        response = await self._request("GET", f"/workers/{worker_id}")
        if response.status_code != 200:
            return {}
        try:
            job = response.json().get("job_status")
        except (ValueError, AttributeError):
            return {}
        return job if isinstance(job, dict) else {}


def same_url(listed: object, url: str) -> bool:
    return isinstance(listed, str) and listed.rstrip("/") == url.rstrip("/")


async def running_requests(endpoint: Endpoint) -> LoadAnswer:
    """Requests running or queued on an SGLang server (remote.load_reader): unknown is never 0."""
    return await load_of(endpoint)
