"""Router-aware actions: a server behind an SGLang router is taken out before it is touched.

router out -> drain (its running requests finish, bounded) -> the action -> probe -> router in,
the last only when the probe passed. Every step is in the plan and in the audit log. When
anything fails, the worker stays out and the message says how to put it back. The registry wraps
kill, relaunch, restore and rollback with `routed_plan` / `routed_run`, so the CLI and the TUI
both get this; a server no router fronts runs exactly as before.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable

from sglconsole.actions.audit import AuditLog
from sglconsole.actions.base import ActionContext, ActionResult, Plan, StageFailed
from sglconsole.actions.probe import probe
from sglconsole.actions.routing_hints import stays_out
from sglconsole.actions.routing_verify import routed_again
from sglconsole.config.routers import Route, routes_of
from sglconsole.errors import ConsoleError, UsageError
from sglconsole.remote.router.metrics import open_breakers
from sglconsole.remote.router.workers import (
    RouterClient,
    router_client,
    running_requests,
    same_url,
)

SETTLE_S = 0.5
"""After the router lets go: a request it had just sent may still be on its way."""

ROUTER_IN = "router-in"
"""The action that puts a worker (back) in its routers (`sglconsole router-in HOST:PORT`)."""
ROUTER_IN_KEY = "i"
"""Its key in the console (the registry's record uses this one)."""


def router_in_hint(target: str) -> str:
    return f"sglconsole {ROUTER_IN} {target} (key {ROUTER_IN_KEY} in the console)"


async def listed(ctx: ActionContext, route: Route) -> bool | None:
    """Whether ROUTE's router lists the worker now (None: the router could not be read)."""
    try:
        client = await router_client(ctx.ssh, route.router, route.spec)
        return await client.find(route.worker_url) is not None
    except ConsoleError:
        return None


def plan_lines(
    action: str,
    host: str,
    port: int,
    routes: list[Route],
    keep: int | None,
    listed_now: dict[str, bool | None] | None = None,
) -> list:
    """LISTED_NOW: router -> whether it lists the worker now (None or absent: not known)."""
    target = f"{host}:{port}"
    listed_now = listed_now or {}
    lines = []
    fronting = [route for route in routes if listed_now.get(route.router) is not False]
    for route in routes:
        if listed_now.get(route.router) is False:
            after = "" if action == "kill" else f", and it will not be added after the {action}"
            lines.append(
                f"router {route.router}: {target} ({route.worker_url}) is not in router"
                f" {route.router} now: nothing to take out{after}"
                + ("" if action == "kill" else f" (to add it: {router_in_hint(target)})")
            )
            continue
        lines.append(
            f"router {route.router}: take {target} ({route.worker_url}) out first; wait up to"
            f" {route.spec.drain_timeout:g}s for its running requests to finish"
        )
        if keep is not None:
            lines.append(
                f"router {route.router}: at least {keep} other healthy workers must stay in"
                " service, else nothing is touched"
            )
    if action == "kill":
        lines.append(f"then {target} stays out of every router (it is stopped)")
    elif fronting:
        names = ", ".join(route.router for route in fronting)
        lines.append(
            f"after the {action}: probe {target}; put it back in router {names} only if the"
            " probe passes (else it stays out, and the message says how to add it back)"
        )
        for route in (route for route in fronting if route.spec.kind == "smg"):
            lines.append(
                f"router {route.router} (SMG gateway): once it is back, check that it routes to"
                f" {target} again (healthy, breaker closed, a probe through it), else fail"
            )
    return lines


def routed_plan(action: str, planner: Callable[..., Awaitable[Plan]]):
    async def plan(ctx: ActionContext, host: str, port: int, keep: int | None = None, **options):
        shown = await planner(ctx, host, port, **options)
        routes = routes_of(ctx.config, host, port)
        if routes:
            now = {route.router: await listed(ctx, route) for route in routes}
            shown.lines = [*shown.lines, *plan_lines(action, host, port, routes, keep, now)]
        return shown

    return plan


def routed_run(action: str, runner: Callable[..., Awaitable[ActionResult]]):
    async def run(
        ctx: ActionContext, host: str, port: int, plan, keep: int | None = None, **options
    ) -> ActionResult:
        routes = routes_of(ctx.config, host, port)
        if not routes:
            return await runner(ctx, host, port, plan, **options)
        return await through_routers(
            ctx, action, host, port, routes, lambda: runner(ctx, host, port, plan, **options), keep
        )

    return run


async def through_routers(
    ctx: ActionContext,
    action: str,
    host: str,
    port: int,
    routes: list[Route],
    act: Callable[[], Awaitable[ActionResult]],
    keep: int | None = None,
    audit: AuditLog | None = None,
) -> ActionResult:
    target = f"{host}:{port}"
    audit = audit or AuditLog()
    clients = [(route, await router_client(ctx.ssh, route.router, route.spec)) for route in routes]
    taken = [
        (route, client)
        for route, client in clients
        if await take_out(ctx, audit, action, host, port, route, client, keep)
    ]
    if taken:
        await drain(ctx, audit, host, port, max(route.spec.drain_timeout for route, _ in taken))
    try:
        result = await act()
    except ConsoleError as exc:
        hints = "; ".join(stays_out(ctx, target, route) for route, _ in taken)
        for route, _ in taken:
            ctx.skip("router in", stays_out(ctx, target, route))
        raise StageFailed(
            f"{exc}; {hints}" if hints else str(exc), data=getattr(exc, "data", None)
        ) from exc
    if ctx.dry_run:
        return result
    absent = [route for route, _ in clients if all(route is not moved for moved, _ in taken)]
    notes = (
        []
        if action == "kill"
        else [not_added(ctx, action, target, route, result) for route in absent]
    )

    def said(summary: str) -> str:  # after the verdict: what was not put in, and what to do
        return "; ".join([summary, *notes])

    if not taken:
        return ctx.result(action, target, result.ok, said(result.summary), **result.data)
    if action == "kill":
        hints = "; ".join(stays_out(ctx, target, route) for route, _ in taken)
        return ctx.result(action, target, result.ok, f"{result.summary}; {hints}", **result.data)
    passed, why = await probe_passed(ctx, action, host, port, result)
    if not passed:
        for _route in taken:
            ctx.skip("router in", f"not put back: {why}")
        hints = "; ".join(stays_out(ctx, target, route) for route, _ in taken)
        return ctx.result(action, target, False, said(f"{why}; {hints}"), **result.data)
    for route, client in taken:
        await put_back(ctx, audit, action, host, port, route, client)
    names = ", ".join(route.router for route, _ in taken)
    summary = f"{result.summary}; back in router {names}"
    return ctx.result(action, target, result.ok, said(summary), **result.data)


def not_added(
    ctx: ActionContext, action: str, target: str, route: Route, result: ActionResult
) -> str:
    """A router that did not list the worker before the action: it is not added (a step that
    says so), and the verdict says what to do."""
    todo = (
        f"to add it: {router_in_hint(target)}"
        if result.ok
        else "fix it first: a failing server is not added"
    )
    note = f"not in router {route.router} before the {action}: not added; {todo}"
    ctx.skip("router in", note)
    return note


async def take_out(
    ctx: ActionContext,
    audit: AuditLog,
    action: str,
    host: str,
    port: int,
    route: Route,
    client: RouterClient,
    keep: int | None,
) -> bool:
    """True when the worker was in the router and is out now."""
    target, url = f"{host}:{port}", route.worker_url
    async with ctx.stage("router out", f"take {target} out of router {route.router}") as stage:
        workers = await client.workers()
        mine = next((worker for worker in workers if same_url(worker.get("url"), url)), None)
        if keep is not None:  # a worker whose breaker is open serves nobody: not in service
            shut = await open_breakers(ctx.ssh, route.router, route.spec) - {url.rstrip("/")}
            others = [
                worker
                for worker in workers
                if not same_url(worker.get("url"), url)
                and worker.get("is_healthy", True)
                and str(worker.get("url")).rstrip("/") not in shut
            ]
            if len(others) < keep:
                raise StageFailed(
                    f"router {route.router} would keep {len(others)} healthy "
                    f"worker{'' if len(others) == 1 else 's'} in service"
                    + (f" ({len(shut)} with its breaker open)" if shut else "")
                    + f", fewer than --keep {keep}: nothing was touched"
                )
        if mine is None:
            stage.detail = f"router {route.router} does not list {url}: nothing to take out"
            return False
        if ctx.dry_run:
            ctx.commands.append(f"DELETE {route.where()}/workers/{mine.get('id')}  ({url})")
            ctx.commands_short.append(ctx.commands[-1])
            stage.detail = "dry run"
            return False
        record = audit.begin(
            "router-remove",
            host,
            port,
            router=route.router,
            worker_url=url,
            for_action=action,
            fleet=ctx.config.identity,
        )
        try:
            await client.remove(url)
        except ConsoleError as exc:
            audit.end(record, False, f"failed: {exc}")
            raise
        audit.end(record, True, f"{url} out of router {route.router}")
        stage.detail = f"{url} out of router {route.router}; it sends it nothing new"
    return True


async def drain(ctx: ActionContext, audit: AuditLog, host: str, port: int, timeout: float) -> None:
    """Until the server runs no request (twice in a row), at most TIMEOUT seconds."""
    server = ctx.config.server(host, port)
    async with ctx.stage("drain", f"wait up to {timeout:g}s for {host}:{port}'s requests") as stage:
        endpoint = await ctx.ssh[host].forward(port, server.http_address)
        record = audit.begin("drain", host, port, timeout_s=timeout, fleet=ctx.config.identity)
        started = time.monotonic()
        await asyncio.sleep(SETTLE_S)
        idle, running, peak = 0, None, 0
        while idle < 2:
            answer = await running_requests(endpoint)
            if not answer.answered:
                stage.detail = f"the server does not answer ({answer.why}): nothing to wait for"
                audit.end(record, True, stage.detail)
                return
            if answer.load is None:  # unknown is never "idle": wait, bounded, and say why
                if time.monotonic() - started > timeout:
                    stage.detail = f"its load is not known ({answer.why}) after {timeout:g}s: cut"
                    audit.end(record, True, stage.detail, load_unknown=answer.why)
                    return
                idle = 0
                await asyncio.sleep(1.0)
                continue
            running = answer.load.in_flight
            peak = max(peak, running)
            idle = idle + 1 if running == 0 else 0
            if running and time.monotonic() - started > timeout:
                stage.detail = f"{running} requests still running after {timeout:g}s: cut"
                audit.end(record, True, stage.detail, still_running=running)
                return
            await asyncio.sleep(0.2)
        took = time.monotonic() - started
        stage.detail = f"idle after {took:.1f}s (up to {peak} requests were running)"
        audit.end(record, True, stage.detail, peak_running=peak)


async def probe_passed(
    ctx: ActionContext, action: str, host: str, port: int, result: ActionResult
) -> tuple[bool, str]:
    """Whether the server answers right: the restore's own probe, else one probe now."""
    verdict = result.data.get("probe")
    if verdict is None:
        checked = await probe(ctx, host, port, throughput=False)
        verdict = checked.data.get("probe")
    if verdict is not None and verdict.verdict == "OK" and result.ok:
        return True, "probe OK"
    if verdict is None:
        return False, f"{action} failed: {result.summary}"
    return False, f"probe {verdict.verdict}: {verdict.reason}"


async def put_back(
    ctx: ActionContext,
    audit: AuditLog,
    action: str,
    host: str,
    port: int,
    route: Route,
    client: RouterClient,
) -> None:
    target, url = f"{host}:{port}", route.worker_url
    async with ctx.stage("router in", f"put {target} back in router {route.router}") as stage:
        record = audit.begin(
            "router-add",
            host,
            port,
            router=route.router,
            worker_url=url,
            for_action=action,
            fleet=ctx.config.identity,
        )
        try:
            worker = await client.add(url, timeout=route.spec.join_timeout)
        except ConsoleError as exc:
            audit.end(record, False, f"failed: {exc}")
            raise StageFailed(f"{exc}; {stays_out(ctx, target, route)}") from exc
        try:  # an SMG gateway: does it really route to it again (health, breaker, a probe)
            checked = await routed_again(ctx, target, route, client)
        except ConsoleError as exc:
            audit.end(record, False, f"in, but not routed to: {exc}")
            raise
        stage.detail = checked or f"{url} in router {route.router}, healthy (id {worker.get('id')})"
        audit.end(record, True, f"{url} back in router {route.router}")


async def plan_router_in(ctx: ActionContext, host: str, port: int) -> Plan:
    """Put a worker in the routers hosts.yaml says front it: the exact request, after a probe."""
    target = f"{host}:{port}"
    routes = routes_of(ctx.config, host, port)
    if not routes:
        raise UsageError(f"{target}: no router in hosts.yaml fronts it")
    lines = [f"probe {target} first: it is added only if its answer is right"]
    for route in routes:
        now = await listed(ctx, route)
        if now:
            lines.append(f"router {route.router}: already lists {route.worker_url}: nothing to do")
            continue
        body = json.dumps({"url": route.worker_url, "worker_type": "regular"})
        lines.append(f"router {route.router}: POST {route.where()}/workers {body}")
        lines.append(f"router {route.router}: wait until it lists {route.worker_url} healthy")
    return Plan(ROUTER_IN, target, lines)


async def router_in(
    ctx: ActionContext, host: str, port: int, audit: AuditLog | None = None
) -> ActionResult:
    """Probe the server, then add it to every router that fronts it and does not list it."""
    target = f"{host}:{port}"
    audit = audit or AuditLog()
    routes = routes_of(ctx.config, host, port)
    if not routes:
        raise UsageError(f"{target}: no router in hosts.yaml fronts it")
    missing = []
    for route in routes:
        client = await router_client(ctx.ssh, route.router, route.spec)
        if await client.find(route.worker_url) is None:
            missing.append((route, client))
        else:
            ctx.skip("router in", f"router {route.router} already lists {route.worker_url}")
    if not missing:
        return ctx.result(ROUTER_IN, target, True, f"{target} is already in every router")
    if ctx.dry_run:
        for route, _ in missing:
            body = json.dumps({"url": route.worker_url, "worker_type": "regular"})
            ctx.commands.append(f"POST {route.where()}/workers {body}")
            ctx.commands_short.append(ctx.commands[-1])
        return ctx.result(ROUTER_IN, target, True, "dry run: nothing was added")
    checked = await probe(ctx, host, port, throughput=False, speed=False)  # is its answer right
    verdict = checked.data.get("probe")
    if verdict is None or verdict.verdict != "OK":
        for route, _ in missing:
            ctx.skip("router in", f"not added to router {route.router}: {checked.summary}")
        return ctx.result(ROUTER_IN, target, False, f"not added: {checked.summary}", probe=verdict)
    for route, client in missing:
        await put_back(ctx, audit, ROUTER_IN, host, port, route, client)
    names = ", ".join(route.router for route, _ in missing)
    return ctx.result(ROUTER_IN, target, True, f"{target} in router {names}", probe=verdict)
