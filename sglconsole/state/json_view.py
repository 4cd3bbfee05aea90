"""The fleet as JSON: the one writer behind `status --json` and the recordings' server views.

It renders the published views (state.snapshot), so the JSON says what the screen says. Secrets
in argv and environment are masked. `schema_version` grows when a key is added and changes its
major part only when a key changes meaning or goes away.
"""

from __future__ import annotations

import time

from sglconsole.core.long_values import elide_env
from sglconsole.core.secrets import mask_argv, mask_env
from sglconsole.state.model import HostState, ServerState
from sglconsole.state.routing import RouterState, RouteView

SCHEMA_VERSION = "1.3"


def fleet_json(fleet, now: float | None = None) -> dict:
    now = time.time() if now is None else now
    return {
        "schema_version": SCHEMA_VERSION,
        "generated_at": round(now, 3),
        "generated_at_iso": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(now)),
        "generation": fleet.generation,
        "hosts": {name: host_json(host, now) for name, host in fleet.hosts.items()},
        "worst": fleet.worst().value,
        "routers": {name: router_json(r) for name, r in getattr(fleet, "routers", {}).items()},
    }


def router_json(router: RouterState) -> dict:
    return {
        "where": router.where,
        "reachable": router.reachable,
        "error": router.error,
        "asked_at": router.asked_at,
        "workers": [
            {
                "url": w.url,
                "id": w.id,
                "healthy": w.healthy,
                "load": w.load,
                "server": router.server_of(w.url),
            }
            for w in router.workers
        ],
    }


def route_json(route: RouteView) -> dict:
    return {
        "router": route.router,
        "url": route.url,
        "routing": route.routing.value,
        "problem": route.problem,
        "healthy": route.healthy,
        "load": route.load,
        "since": route.since,
    }


def host_json(host: HostState, now: float) -> dict:
    view = host.view
    return {
        "reachable": host.reachable,
        "error": host.error,
        "gpu_error": host.gpu_error,
        "gpus": [
            {
                "index": g.index,
                "name": g.name,
                "uuid": g.uuid,
                "util": g.util_gpu,
                "mem_used_mib": g.mem_used_mib,
                "mem_total_mib": g.mem_total_mib,
                "temperature_c": g.temperature_c,
                "power_w": g.power_draw_w,
            }
            for g in host.gpus
        ],
        "servers": [
            server_json(s, now) for s in sorted(host.servers.values(), key=lambda s: s.port)
        ],
        "orphans": [
            {"pid": p.pid, "ppid": p.ppid, "title": p.title} for p in (view.orphans if view else ())
        ],
        "unaccounted_gpu_pids": [a.pid for a in (view.unaccounted if view else ())],
        "notes": list(view.notes) if view else [],
    }


def server_json(server: ServerState, now: float) -> dict:
    view = server.view
    load = view.load
    process = server.process if view.pid is not None else None
    return {
        "port": server.port,
        "profile": server.profile_name,
        "managed": server.managed,
        "status": view.status.value,
        "reason": view.reason,
        "pid": view.pid,
        "argv": mask_argv(list(process.main.argv)) if process else None,
        "env": elide_env(mask_env(process.main.env or {})) if process else None,
        "gpus": list(process.gpus) if process else None,
        "children": [{"pid": c.pid, "title": c.title, "state": c.state} for c in process.children]
        if process
        else [],
        "tok_s": view.tok_s,
        "accept_len": load.accept_len if load else None,
        "running_req": load.running_req if load else None,
        "queue_req": load.queue_req if load else None,
        "load_source": load.source if load else None,
        "metrics": server.metrics.as_dict()
        if server.metrics is not None and server.process is not None
        else None,
        "uptime_s": view.uptime(now),
        "version": server.version,
        "health": server.health,
        "log": server.log_path,
        "drift": view.drift_differs,
        "drift_count": view.drift_count,
        "generation": view.generation,
        "stale_s": None if view.stale_since is None else round(now - view.stale_since, 1),
        "routers": [route_json(r) for r in view.routes],
    }
