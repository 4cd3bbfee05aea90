"""The fleet as JSON, the one module that writes it: `status --json` (and the exporter's /status)
and the records of a recording (`--record`: flat dicts of fields, read back by tui.codec).

Both render the published views (state.server_view), so the JSON says what the screen says. Secrets
in argv and environment are masked. `schema_version` (status --json) grows when a key is added
and changes its major part only when a key changes meaning or goes away; a recording's fields
stay readable by every later replay.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from sglconsole.core.drift import Report
from sglconsole.core.long_values import elide_env
from sglconsole.core.processes import ProcessView, ProcInfo, ServerProcess
from sglconsole.core.secrets import mask_argv, mask_env
from sglconsole.state.canary import canary_json, signals_json
from sglconsole.state.containers_json import container_json, engines_json
from sglconsole.state.fleet import FleetState
from sglconsole.state.model import HostState, Sample, ServerState, ServerView
from sglconsole.state.precursors.status_json import host_signs_json, server_signs_json
from sglconsole.state.routing import RouterState, RouteView

SCHEMA_VERSION = "1.6"


# ------------------------------------------------------------ status --json


def fleet_json(fleet: FleetState, now: float | None = None) -> dict:
    now = time.time() if now is None else now
    return {
        "schema_version": SCHEMA_VERSION,
        "generated_at": round(now, 3),
        "generated_at_iso": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(now)),
        "generation": fleet.generation,
        "hosts": {name: host_json(host, now) for name, host in fleet.hosts.items()},
        "worst": fleet.worst().value,
        "routers": {name: router_json(router, now) for name, router in fleet.routers.items()},
    }


def router_json(router: RouterState, now: float | None = None) -> dict:
    return {
        "where": router.where,
        "reachable": router.reachable,
        "error": router.error,
        "asked_at": router.asked_at,
        "kind": router.kind,
        "workers": [
            {
                "url": worker.url,
                "id": worker.id,
                "healthy": worker.healthy,
                "load": worker.load,
                "breaker": worker.breaker,
                "inflight": worker.inflight,
                "server": router.server_of(worker.url),
            }
            for worker in router.workers
        ],
        # the canary asked through it (state.canary; issue 27)
        "canary": canary_json(
            router.canary, None, time.time() if now is None else now, router=True
        ),
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
        "breaker": route.breaker,
        "inflight": route.inflight,
    }


def host_json(host: HostState, now: float) -> dict:
    view = host.view
    return {
        "reachable": host.reachable,
        "error": host.error,
        "gpu_error": host.gpu_error,
        "gpus": [
            {
                "index": gpu.index,
                "name": gpu.name,
                "uuid": gpu.uuid,
                "util": gpu.util_gpu,
                "mem_used_mib": gpu.mem_used_mib,
                "mem_total_mib": gpu.mem_total_mib,
                "temperature_c": gpu.temperature_c,
                "power_w": gpu.power_draw_w,
            }
            for gpu in host.gpus
        ],
        "servers": [
            server_json(server, now) | server_signs_json(host, server.port)
            for server in sorted(host.servers.values(), key=lambda server: server.port)
        ],
        "orphans": [
            {"pid": orphan.pid, "ppid": orphan.ppid, "title": orphan.title}
            for orphan in (view.orphans if view else ())
        ],
        "unaccounted_gpu_pids": [app.pid for app in (view.unaccounted if view else ())],
        "notes": list(view.notes) if view else [],
        "weight_cache_daemons": [
            {
                "pid": cache.main.pid,
                "model": cache.model,
                "gpus": list(cache.gpus),
                "gpu_mem_mib": cache.gpu_mem_mib,
            }
            for cache in (view.weight_caches if view else ())
        ],
        **host_signs_json(host, now),  # the signs before an outage (state.precursors.status_json)
        "container_engines": engines_json(host),
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
        "children": [
            {"pid": child.pid, "title": child.title, "state": child.state}
            for child in process.children
        ]
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
        "routers": [route_json(route) for route in view.routes],
        # the canary and SGLang's own warnings (state.canary): the current process's only
        "canary": canary_json(server.canary, view.pid, now),
        "sglang_signals": signals_json(server.signals, view.pid, view.started),
        "container": container_json(server),  # the Docker/Podman container it runs in
    }


# ------------------------------------------------- a recording's records
# Each encoder returns a flat dict of top-level fields, so a recorder can write only the fields
# that changed and a replay can apply them one by one (tui.codec).

HOST_FIELDS = ("reachable", "error", "since", "retry_at", "gpu_error", "gpu_time", "watcher_error")
SERVER_FIELDS = (
    "profile_name",
    "log_path",
    "log_state",
    "ready_seen_at",
    "health",
    "version",
    "drift_error",
    "action",
)
VIEW_SKIPPED = ("throughput", "generation", "at")  # rebuilt from the replayed samples; bookkeeping
ROUTER_FIELDS = ("reachable", "error", "asked_at", "since", "kind")


def host_record(host: HostState) -> dict[str, Any]:
    out = {name: getattr(host, name) for name in HOST_FIELDS}
    out["gpus"] = [_compact(gpu) for gpu in host.gpus]
    out["view"] = None if host.view is None else _view(host.view)
    return out


def server_record(server: ServerState) -> dict[str, Any]:
    out = {name: getattr(server, name) for name in SERVER_FIELDS}
    out["view"] = _view_fields(server.view)
    out["process"] = None if server.process is None else _process(server.process)
    out["probe"] = None if server.probe is None else _compact(server.probe)
    out["drift"] = None if server.drift is None else _report(server.drift)
    return out


def _view_fields(view: ServerView) -> dict[str, Any]:
    """What the operator saw of the server (status, reason, tok/s, load), as published."""
    fields = {
        field.name: getattr(view, field.name)
        for field in dataclasses.fields(view)
        if field.name not in VIEW_SKIPPED
    }
    fields["status"] = view.status.value
    fields["load"] = None if view.load is None else dataclasses.asdict(view.load)
    fields["routes"] = [
        {**dataclasses.asdict(route), "routing": route.routing.value} for route in view.routes
    ]
    return fields


def router_record(router: RouterState) -> dict[str, Any]:
    out = {name: getattr(router, name) for name in ROUTER_FIELDS}
    out["workers"] = [dataclasses.asdict(worker) for worker in router.workers]
    return out


def sample_record(sample: Sample) -> dict[str, Any]:
    return dataclasses.asdict(sample)


def _compact(obj: Any) -> dict[str, Any]:
    return {name: value for name, value in dataclasses.asdict(obj).items() if value is not None}


def _proc(proc: ProcInfo) -> dict[str, Any]:
    out = _compact(proc)
    out["argv"] = mask_argv(list(proc.argv))
    out["ancestors"] = list(proc.ancestors)
    if proc.env is not None:
        out["env"] = mask_env(proc.env)
    return out


def _process(process: ServerProcess) -> dict[str, Any]:
    return {
        "main": _proc(process.main),
        "port": process.port,
        "children": [_proc(child) for child in process.children],
        "gpus": list(process.gpus),
        "gpu_mem_mib": process.gpu_mem_mib,
    }


def _view(view: ProcessView) -> dict[str, Any]:
    return {
        "orphans": [_proc(orphan) for orphan in view.orphans],
        "unaccounted": [_compact(app) for app in view.unaccounted],
        "foreign_pids": view.foreign_pids,
        "notes": list(view.notes),
        "weight_caches": [
            {
                "main": _proc(cache.main),
                "members": [_proc(member) for member in cache.members],
                "gpus": list(cache.gpus),
                "held": [_compact(app) for app in cache.held],
            }
            for cache in view.weight_caches
        ],
    }


def _report(report: Report) -> dict[str, Any]:
    rows = [{**row.to_dict(), "name": row.name, "kind": row.kind} for row in report.rows]
    return {
        "rows": rows,
        "version": report.version,
        "requires": report.requires,
        "version_ok": report.version_ok,
        "errors": dict(report.errors),
        "ambient": mask_env(report.ambient),
        "build": mask_env(report.build),
        **({"notes": list(report.notes)} if report.notes else {}),  # absent in older recordings
        "env_judge": report.env_judge,
        # absent in older recordings; a container's rows as `diff --json` has them
        **({"container": [row.to_dict() for row in report.container]} if report.container else {}),
    }
