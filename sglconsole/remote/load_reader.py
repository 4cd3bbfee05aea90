"""Asking an SGLang server how many requests it runs: /v1/loads, /get_load only where a release
has no /v1/loads (core.server_load reads the bodies). Drains, probes and the monitor ask here."""

from __future__ import annotations

from dataclasses import dataclass

import httpx

from sglconsole.core.server_load import GET_LOAD, V1_LOADS, RequestLoad, parse_load
from sglconsole.remote.endpoint import Endpoint


@dataclass(frozen=True, slots=True)
class LoadAnswer:
    load: RequestLoad | None
    """None: not known (never 0)."""
    why: str = ""
    """Why the load is not known."""
    answered: bool = True
    """Whether the server answered HTTP at all (a dead server has nothing to drain)."""


async def ask_load(client: httpx.AsyncClient) -> LoadAnswer:
    for path in (V1_LOADS, GET_LOAD):
        try:
            response = await client.get(path)
        except httpx.HTTPError as exc:
            return LoadAnswer(None, f"no answer from {path} ({type(exc).__name__})", False)
        if response.status_code == 404:
            continue  # this release has no such route: the older one, or none
        if response.status_code != 200:
            return LoadAnswer(None, f"{path} answered HTTP {response.status_code}")
        try:
            load = parse_load(path, response.json())
        except ValueError:
            load = None
        return LoadAnswer(load, "" if load else f"{path} answered something unreadable")
    return LoadAnswer(None, f"neither {V1_LOADS} nor {GET_LOAD} exists on this server")


async def load_of(endpoint: Endpoint, timeout: float = 5.0) -> LoadAnswer:
    async with endpoint.client(timeout=timeout) as client:
        return await ask_load(client)
