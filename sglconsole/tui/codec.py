"""A recording's JSON back into fleet state, for replays: the records state.json_view wrote
(the one module that writes the fleet as JSON), applied field by field, in every form an older
recording has them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from sglconsole.core.drift import Report, Row, State
from sglconsole.core.drift_container import ContainerRow
from sglconsole.core.drift_meaning import JUDGES
from sglconsole.core.nvidia_smi import ComputeApp, GpuSample
from sglconsole.core.probe_result import ProbeResult
from sglconsole.core.processes import ProcessView, ProcInfo, ServerProcess, WeightCacheDaemon
from sglconsole.state.fleet import HostState, Load, Sample, ServerState, ServerView, Status
from sglconsole.state.json_view import HOST_FIELDS, ROUTER_FIELDS, SERVER_FIELDS, VIEW_SKIPPED
from sglconsole.state.routing import RouterState, RouterWorker, RouteView, Routing
from sglconsole.state.server_view import derive_view
from sglconsole.state.status import process_samples


def apply_host(host: HostState, fields: dict[str, Any]) -> None:
    for name, value in fields.items():
        if name == "gpus":
            host.gpus = [GpuSample(**gpu) for gpu in value]
        elif name == "view":
            host.view = None if value is None else _decode_view(value)
        elif name in HOST_FIELDS:
            setattr(host, name, value)


def apply_router(router: RouterState, fields: dict[str, Any]) -> None:
    for name, value in fields.items():
        if name == "workers":
            router.workers = [RouterWorker(**worker) for worker in value]
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
    names = {field.name for field in dataclasses.fields(ServerView)} - set(VIEW_SKIPPED)
    fields = {name: value for name, value in data.items() if name in names}
    fields["status"] = Status(fields.get("status", Status.UNKNOWN))
    fields["load"] = None if not fields.get("load") else Load(**fields["load"])
    fields["routes"] = tuple(
        RouteView(**{**route, "routing": Routing(route["routing"])})
        for route in fields.get("routes") or ()
    )
    view = ServerView(**fields)
    samples = process_samples(server) if view.pid is not None else []
    spark = tuple(
        sample.gen_throughput
        for sample in samples
        if not sample.after_idle and sample.gen_throughput is not None
    )
    return dataclasses.replace(view, throughput=spark)


@dataclasses.dataclass(frozen=True)
class LegacyView(ServerView):
    """A view from a recording that kept only status and reason: the replay derives the numbers."""


def _as_fields(view: ServerView) -> dict[str, Any]:
    return {field.name: getattr(view, field.name) for field in dataclasses.fields(view)}


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
        tuple(_decode_proc(child) for child in data["children"]),
        tuple(data["gpus"]),
        data["gpu_mem_mib"],
    )


def _decode_view(data: dict[str, Any]) -> ProcessView:
    return ProcessView(
        (),
        tuple(_decode_proc(orphan) for orphan in data["orphans"]),
        tuple(ComputeApp(**app) for app in data["unaccounted"]),
        data["foreign_pids"],
        tuple(data["notes"]),
        tuple(  # recordings made before weight-cache daemons were told apart have none
            WeightCacheDaemon(
                _decode_proc(cache["main"]),
                tuple(_decode_proc(member) for member in cache["members"]),
                tuple(cache["gpus"]),
                tuple(ComputeApp(**app) for app in cache["held"]),
            )
            for cache in data.get("weight_caches") or ()
        ),
    )


def _decode_probe(data: dict[str, Any]) -> ProbeResult:
    names = {field.name for field in dataclasses.fields(ProbeResult)}
    return ProbeResult(**{name: value for name, value in data.items() if name in names})


def _decode_report(data: dict[str, Any]) -> Report:
    rows = [
        Row(
            kind=row["kind"],
            name=row["name"],
            flag=row["flag"],
            profile=row["profile"],
            running=row["running"],
            resolved=row["resolved"],
            state=State(row["state"]),
            performance=row["performance"],
            # recordings from before drift said its judge hold neither key
            judged=next(
                (judge for judge, label in JUDGES.items() if label == row.get("judged_by")),
                "parser",
            ),
            meaning=row.get("meaning") or "",
            note=row.get("note"),
        )
        for row in data["rows"]
    ]
    return Report(
        rows=rows,
        version=data["version"],
        requires=data["requires"],
        version_ok=data["version_ok"],
        errors=data["errors"],
        ambient=data.get("ambient") or {},
        build=data.get("build") or {},
        notes=list(data.get("notes") or []),
        env_judge=data.get("env_judge"),
        container=[container_row(row) for row in data.get("container") or []],
    )


def container_row(data: dict) -> ContainerRow:
    """A container row as recorded (core.drift_container.ContainerRow.to_dict)."""
    return ContainerRow(
        name=data["dest"],
        label=data["flag"],
        profile=data.get("profile"),
        running=data.get("running"),
        differs=data.get("state") == "DIFFERENT",
        performance=bool(data.get("performance")),
        note=data.get("note"),
    )
