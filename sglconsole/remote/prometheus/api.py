"""Prometheus's HTTP API: one instant query, its answer or an error that says where and why."""

from __future__ import annotations

import httpx


class PrometheusError(Exception):
    """Prometheus did not answer a query (unreachable, an HTTP error, or a query it refused)."""


class PrometheusApi:
    def __init__(self, url: str, *, timeout: float = 10.0):
        self.url = url.rstrip("/")
        self.client = httpx.AsyncClient(timeout=timeout)

    async def query(self, promql: str) -> list[dict]:
        """The instant vector `promql` evaluates to now: [{"metric": {...}, "value": [t, "v"]}]."""
        try:
            reply = await self.client.get(self.url + "/api/v1/query", params={"query": promql})
        except httpx.HTTPError as exc:
            raise PrometheusError(
                f"prometheus {self.url} unreachable: {exc or type(exc).__name__}"
            ) from None
        try:
            body = reply.json()
        except ValueError:
            body = None
        if not isinstance(body, dict) or body.get("status") != "success":
            said = body.get("error") if isinstance(body, dict) else reply.text[:200]
            raise PrometheusError(
                f"prometheus {self.url} answered HTTP {reply.status_code} to {promql!r}: {said}"
            )
        result = (body.get("data") or {}).get("result")
        if not isinstance(result, list):
            raise PrometheusError(f"prometheus {self.url}: no instant vector for {promql!r}")
        return result

    async def close(self) -> None:
        await self.client.aclose()
