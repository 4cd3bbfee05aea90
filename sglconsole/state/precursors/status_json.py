"""The signs before an outage as `status --json` writes them (state.json_view adds these keys;
their shape is state.status_schema's StatusMemory, StatusKernelLog, StatusGpuHealth)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sglconsole.state.precursors.signs import (
    KIB_PER_MIB,
    describe,
    findings,
    memory_trend,
    rss_kb,
    rss_trend,
)

if TYPE_CHECKING:
    from sglconsole.state.model import HostState


def _mib(value_kb: float | None) -> float | None:
    return None if value_kb is None else round(value_kb / KIB_PER_MIB, 1)


def _per_min(slope_kb_s: float | None) -> float | None:
    return None if slope_kb_s is None else round(slope_kb_s * 60 / KIB_PER_MIB, 1)


def host_signs_json(host: HostState, now: float) -> dict:
    signs = host.signs
    trend = memory_trend(host)
    newest = signs.memory[-1] if signs.memory else None
    return {
        "memory": {
            "available_mib": _mib(newest[1]) if newest else None,
            "total_mib": _mib(signs.total_kb),
            "read_at": newest[0] if newest else None,
            "slope_mib_min": _per_min(trend.slope_kb_s),
            "steady": trend.steady,
            "oom_eta_s": None if trend.eta_s is None else round(trend.eta_s),
            "error": signs.memory_error,
        },
        "kernel_log": {
            "source": signs.kernel_source,
            "error": signs.kernel_error,
            "events": [
                {
                    "kind": hit.event.kind,
                    "time": hit.event.time,
                    "text": describe(hit),
                    "line": hit.event.text,
                    "pid": hit.event.pid,
                    "xid": hit.event.xid,
                    "ports": list(hit.ports),
                }
                for hit in signs.kernel
            ],
        },
        "gpu_health": [
            {
                "index": reading.index,
                "ecc_corrected": reading.ecc_corrected,
                "ecc_uncorrected": reading.ecc_uncorrected,
                "remapped_correctable": reading.remapped_correctable,
                "remapped_uncorrectable": reading.remapped_uncorrectable,
                "remap_pending": reading.remap_pending,
                "remap_failure": reading.remap_failure,
            }
            for _, reading in sorted(signs.health.items())
        ],
        "gpu_health_error": signs.health_error,
        "signs": [
            {"kind": found.kind, "port": found.port, "text": found.text, "time": found.time}
            for found in findings(host, now)
        ],
    }


def server_signs_json(host: HostState, port: int) -> dict:
    return {
        "rss_mib": _mib(rss_kb(host, port)),
        "rss_slope_mib_min": _per_min(rss_trend(host, port).slope_kb_s),
    }
