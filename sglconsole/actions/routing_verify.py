"""After a worker is put back in an SMG gateway: does the gateway really route to it again?

Listed healthy is not enough on the gateway: a worker whose breaker is open gets nothing (sglang
#25811: client errors opened it), and one the gateway gave up probing never comes back (smg PR
#2468). So the put-back is verified three ways: the gateway lists it healthy, its breaker
(`smg_worker_cb_state`) is closed, and a probe sent through the gateway reaches it (its
`smg_worker_requests_total` grows). What fails is said, and the action is left failed. Without
`metrics_port:` the breaker and the probe cannot be seen: the stage says so, and passes.
"""

from __future__ import annotations

import asyncio
import time

import httpx

from sglconsole.actions.base import ActionContext, StageFailed
from sglconsole.config.routers import Route
from sglconsole.remote.router.gateway import SMG, WorkerGauges, generation_of
from sglconsole.remote.router.metrics import metrics_endpoint, read_gauges
from sglconsole.remote.router.workers import RouterClient, same_url

PROBE_PARAMS = {"max_new_tokens": 4, "temperature": 0}
"""Each probe's prompt is new (a number and the time in it): the gateway's default cache_aware
policy sends a prompt no worker has cached to the one with the least cached, the new one; the
same prompt each time would go where it went before."""
PROBE_TIMEOUT_S = 30.0
ROUNDS_PER_WORKER = 2
"""Probes sent through the gateway, per worker it lists, before saying the new one got none:
round-robin reaches it within one round, a load-aware policy within a few."""
ROUTABLE_WITHIN_S = 5.0
"""...and for at least this long: a gateway that has just listed a worker healthy may take a
health-check round or two to pick it (seen under load), which is not a gateway that never will."""
PROBE_PAUSE_S = 0.2


async def is_gateway(route: Route, client: RouterClient) -> bool:
    """Whether ROUTE's router is an SMG gateway (as hosts.yaml says, else as its rows tell)."""
    if route.spec.kind is not None:
        return route.spec.kind == SMG
    return generation_of(await client.workers()) == SMG


async def routed_again(
    ctx: ActionContext, target: str, route: Route, client: RouterClient
) -> str | None:
    """For an SMG gateway, how the put-back was verified (StageFailed: what did not hold);
    None for sglang-router 0.3.x, whose put-back stays as it was."""
    if not await is_gateway(route, client):
        return None
    return f"{route.worker_url} in router {route.router}: " + await verify_routed(
        ctx, target, route, client
    )


async def verify_routed(ctx: ActionContext, target: str, route: Route, client: RouterClient) -> str:
    """One line saying how the put-back was verified; StageFailed saying what did not hold."""
    url = route.worker_url
    metrics = await metrics_endpoint(ctx.ssh, route.spec)
    if metrics is None:
        return (
            f"listed healthy; its breaker and a probe through the gateway are not verified (give"
            f" router {route.router} a metrics_port:)"
        )
    before = await _gauges(route, metrics, url)
    if before.breaker != "closed":
        raise StageFailed(
            f"router {route.router} lists {url} healthy but its circuit breaker is"
            f" {before.breaker or 'not published'}: the gateway sends it nothing"
        )
    least = max(2, ROUNDS_PER_WORKER * len(await client.workers()))
    until = time.monotonic() + ROUTABLE_WITHIN_S
    sent = 0
    async with client.endpoint.client(timeout=PROBE_TIMEOUT_S) as http:
        while sent < least or time.monotonic() < until:
            body = {"text": f"Say OK ({sent}, {time.time()}).", "sampling_params": PROBE_PARAMS}
            try:
                answer = await http.post("/generate", json=body, headers=client.headers)
            except httpx.HTTPError as exc:
                raise StageFailed(f"a probe through router {route.router} failed: {exc}") from None
            if answer.status_code != 200:
                raise StageFailed(
                    f"a probe through router {route.router} answered {answer.status_code}:"
                    f" {answer.text[:200]}"
                )
            sent += 1
            now = await _gauges(route, metrics, url)
            if (now.requests or 0) > (before.requests or 0):
                if now.breaker != "closed" or (now.failures or 0) > 0:
                    raise StageFailed(
                        f"a probe through router {route.router} reached {target} and failed"
                        f" there (breaker {now.breaker}, {now.failures} failures in a row)"
                    )
                return f"healthy, breaker closed, a probe through it reached it ({sent} sent)"
            await asyncio.sleep(PROBE_PAUSE_S)
    raise StageFailed(
        f"router {route.router} lists {url} healthy with its breaker closed, but none of {sent}"
        f" probes through it in {ROUTABLE_WITHIN_S:g} s reached {target}: it does not route to it"
    )


async def _gauges(route: Route, metrics, url: str) -> WorkerGauges:
    gauges = await read_gauges(route.router, metrics)
    return next(
        (found for listed, found in gauges.items() if same_url(listed, url)), WorkerGauges()
    )
