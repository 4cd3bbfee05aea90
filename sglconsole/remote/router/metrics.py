"""A router's Prometheus page (its --prometheus-port, hosts.yaml `metrics_port:`), read per worker.

Reached like the router itself: through an SSH port forward on its host, or at its `url:`'s
address. What it says is parsed in remote.router.gateway; a page that cannot be read is an error
with the reason, and its gauges are then unknown, never 0.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx

from sglconsole.config import Router
from sglconsole.remote.endpoint import Endpoint
from sglconsole.remote.router.gateway import WorkerGauges, worker_gauges
from sglconsole.remote.router.workers import RouterError
from sglconsole.remote.ssh.connection import SshFleet


async def metrics_endpoint(fleet: SshFleet, router: Router) -> Endpoint | None:
    """Where ROUTER's /metrics is, or None when hosts.yaml gives no `metrics_port:`."""
    if router.metrics_port is None:
        return None
    if router.url:
        parts = urlsplit(router.url)
        host = f"[{parts.hostname}]" if ":" in (parts.hostname or "") else parts.hostname
        return Endpoint(f"{parts.scheme}://{host}:{router.metrics_port}")
    return await fleet[router.host].forward(router.metrics_port)


async def read_gauges(name: str, endpoint: Endpoint, timeout: float = 5) -> dict[str, WorkerGauges]:
    """Worker URL -> its gauges, as the router publishes them now."""
    try:
        async with endpoint.client(timeout=timeout) as client:
            response = await client.get("/metrics")
    except httpx.HTTPError as exc:
        raise RouterError(name, f"/metrics at {endpoint}: {type(exc).__name__} {exc}") from None
    if response.status_code != 200:
        raise RouterError(name, f"/metrics at {endpoint} answered {response.status_code}")
    return worker_gauges(response.text)


async def open_breakers(fleet: SshFleet, name: str, router: Router) -> set[str]:
    """The workers (URLs, no trailing /) whose breaker is open now: they serve nobody. None known
    without a `metrics_port:`; a page that cannot be read is an error (RouterError)."""
    endpoint = await metrics_endpoint(fleet, router)
    if endpoint is None:
        return set()
    gauges = await read_gauges(name, endpoint)
    return {url.rstrip("/") for url, found in gauges.items() if found.breaker == "open"}
