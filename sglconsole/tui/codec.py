"""Fleet state to JSON and back, for recordings: the fields the console shows, secrets masked.

Each encoder returns a flat dict of top-level fields, so a recorder can write
only the fields that changed and a replay can apply them one by one.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from sglconsole.actions.probe import ProbeResult
from sglconsole.core.drift import Report, Row, State
from sglconsole.core.nvidia_smi import ComputeApp, GpuSample
from sglconsole.core.processes import ProcessView, ProcInfo, ServerProcess
from sglconsole.core.secrets import mask_argv, mask_env
from sglconsole.state.fleet import HostState, Load, Sample, ServerState, ServerView, Status
from sglconsole.state.routing import RouterState, RouterWorker, RouteView, Routing
from sglconsole.state.snapshot import derive_view
from sglconsole.state.status import process_samples

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
ROUTER_FIELDS = ("reachable", "error", "asked_at", "since")


# ------------------------------------------------------------------ encode


def encode_host(host: HostState) -> dict[str, Any]:
    out = {name: getattr(host, name) for name in HOST_FIELDS}
    out["gpus"] = [_compact(g) for g in host.gpus]
    out["view"] = None if host.view is None else _view(host.view)
    return out


def encode_server(server: ServerState) -> dict[str, Any]:
    out = {name: getattr(server, name) for name in SERVER_FIELDS}
    out["view"] = _view_fields(server.view)
    out["process"] = None if server.process is None else _process(server.process)
    out["probe"] = _compact(server.probe) if dataclasses.is_dataclass(server.probe) else None
    out["drift"] = None if server.drift is None else _report(server.drift)
    return out


def _view_fields(view: ServerView) -> dict[str, Any]:
    """What the operator saw of the server (status, reason, tok/s, load), as published."""
    fields = {
        f.name: getattr(view, f.name)
        for f in dataclasses.fields(view)
        if f.name not in VIEW_SKIPPED
    }
    fields["status"] = view.status.value
    fields["load"] = None if view.load is None else dataclasses.asdict(view.load)
    fields["routes"] = [{**dataclasses.asdict(r), "routing": r.routing.value} for r in view.routes]
    return fields


def encode_router(router: RouterState) -> dict[str, Any]:
    out = {name: getattr(router, name) for name in ROUTER_FIELDS}
    out["workers"] = [dataclasses.asdict(w) for w in router.workers]
    return out


def encode_sample(sample: Sample) -> dict[str, Any]:
    return dataclasses.asdict(sample)


def _compact(obj: Any) -> dict[str, Any]:
    return {k: v for k, v in dataclasses.asdict(obj).items() if v is not None}


def _proc(proc: ProcInfo) -> dict[str, Any]:
    out = _compact(proc)
    out["argv"] = mask_argv(list(proc.argv))
    if proc.env is not None:
        out["env"] = mask_env(proc.env)
    return out


def _process(process: ServerProcess) -> dict[str, Any]:
    return {
        "main": _proc(process.main),
        "port": process.port,
        "children": [_proc(c) for c in process.children],
        "gpus": list(process.gpus),
        "gpu_mem_mib": process.gpu_mem_mib,
    }


def _view(view: ProcessView) -> dict[str, Any]:
    return {
        "orphans": [_proc(p) for p in view.orphans],
        "unaccounted": [_compact(a) for a in view.unaccounted],
        "foreign_pids": view.foreign_pids,
        "notes": list(view.notes),
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
    }


# ------------------------------------------------------------------ decode


def apply_host(host: HostState, fields: dict[str, Any]) -> None:
    for name, value in fields.items():
        if name == "gpus":
            host.gpus = [GpuSample(**g) for g in value]
        elif name == "view":
            host.view = None if value is None else _decode_view(value)
        elif name in HOST_FIELDS:
            setattr(host, name, value)


def apply_router(router: RouterState, fields: dict[str, Any]) -> None:
    for name, value in fields.items():
        if name == "workers":
            router.workers = [RouterWorker(**w) for w in value]
        elif name in ROUTER_FIELDS:
            setattr(router, name, value)


def apply_server(server: ServerState, fields: dict[str, Any]) -> None:
    decoders = {"process": _decode_process, "probe": _decode_probe, "drift": _decode_report}
    for name, value in fields.items():
        if name == "view":
            server.view = _decode_view_fields(server, value)
        elif name in ("status", "reason"):  # recordings made before views were recorded whole
            server.view = LegacyView(
                **{**_as_fields(server.view), name: Status(value) if name == "status" else value}
            )
        elif name in decoders:
            setattr(server, name, None if value is None else decoders[name](value))
        elif name in SERVER_FIELDS:
            setattr(server, name, value)


def _decode_view_fields(server: ServerState, data: dict[str, Any]) -> ServerView:
    names = {f.name for f in dataclasses.fields(ServerView)} - set(VIEW_SKIPPED)
    fields = {k: v for k, v in data.items() if k in names}
    fields["status"] = Status(fields.get("status", Status.UNKNOWN))
    fields["load"] = None if not fields.get("load") else Load(**fields["load"])
    fields["routes"] = tuple(
        RouteView(**{**r, "routing": Routing(r["routing"])}) for r in fields.get("routes") or ()
    )
    view = ServerView(**fields)
    samples = process_samples(server) if view.pid is not None else []
    spark = tuple(
        s.gen_throughput for s in samples if not s.after_idle and s.gen_throughput is not None
    )
    return dataclasses.replace(view, throughput=spark)


@dataclasses.dataclass(frozen=True)
class LegacyView(ServerView):
    """A view from a recording that kept only status and reason: the replay derives the numbers."""


def _as_fields(view: ServerView) -> dict[str, Any]:
    return {f.name: getattr(view, f.name) for f in dataclasses.fields(view)}


def legacy_numbers(server: ServerState, host: HostState, now: float) -> None:
    """Numbers for a legacy recording's view, derived from the replayed samples; status and reason
    stay as recorded."""
    if isinstance(server.view, LegacyView):
        derived = derive_view(server, host, now, server.view.generation)
        server.view = LegacyView(
            **{**_as_fields(derived), "status": server.view.status, "reason": server.view.reason}
        )


def decode_sample(data: dict[str, Any]) -> Sample:
    return Sample(**data)


def _decode_proc(data: dict[str, Any]) -> ProcInfo:
    return ProcInfo(**{**data, "argv": tuple(data.get("argv") or ())})


def _decode_process(data: dict[str, Any]) -> ServerProcess:
    return ServerProcess(
        _decode_proc(data["main"]),
        data["port"],
        tuple(_decode_proc(c) for c in data["children"]),
        tuple(data["gpus"]),
        data["gpu_mem_mib"],
    )


def _decode_view(data: dict[str, Any]) -> ProcessView:
    return ProcessView(
        (),
        tuple(_decode_proc(p) for p in data["orphans"]),
        tuple(ComputeApp(**a) for a in data["unaccounted"]),
        data["foreign_pids"],
        tuple(data["notes"]),
    )


def _decode_probe(data: dict[str, Any]) -> ProbeResult:
    names = {f.name for f in dataclasses.fields(ProbeResult)}
    return ProbeResult(**{k: v for k, v in data.items() if k in names})


def _decode_report(data: dict[str, Any]) -> Report:
    rows = [
        Row(
            r["kind"],
            r["name"],
            r["flag"],
            r["profile"],
            r["running"],
            r["resolved"],
            State(r["state"]),
            r["performance"],
        )
        for r in data["rows"]
    ]
    return Report(
        rows,
        data["version"],
        data["requires"],
        data["version_ok"],
        data["errors"],
        data.get("ambient") or {},
        data.get("build") or {},
    )
