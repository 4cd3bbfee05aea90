"""What tells the two router generations apart, and what the SMG gateway publishes per worker.

sglang-router 0.3.x and the SMG gateway (the `smg` package, 1.13) answer the same worker API
(``GET /workers``, ``DELETE /workers/{id}``, ``POST /workers`` answered 202); the gateway's rows
carry a lifecycle ``status`` and ``models`` (crates/protocols/src/worker.rs, WorkerInfo), 0.3.x
rows a ``metadata`` map instead. Both publish per-worker gauges on their Prometheus port, named
``smg_worker_*`` (smg 1.13, and sglang-router 0.3.2 already) or ``sgl_router_worker_*`` (the
sgl-model-gateway inside sglang): health, circuit-breaker state and in-flight requests. A gauge
that is absent, or set to -1 (the gateway's "worker gone", metrics.rs), is unknown, never 0.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from sglconsole.errors import RemoteError

SMG = "smg"
SGLANG_ROUTER = "sglang-router"
GENERATIONS = (SGLANG_ROUTER, SMG)

BREAKER_STATES = {0: "closed", 1: "open", 2: "half-open"}
"""smg_worker_cb_state's codes (model_gateway/src/worker/circuit_breaker.rs: STATE_CLOSED = 0,
STATE_OPEN = 1, STATE_HALF_OPEN = 2)."""

PREFIXES = ("smg_", "sgl_router_")
GAUGES = {
    "worker_health": "health",
    "worker_cb_state": "breaker",
    "worker_requests_active": "inflight",  # smg 1.13
    "worker_inflight_requests": "inflight",  # sglang's sgl-model-gateway
    "worker_requests_total": "requests",
    "worker_cb_consecutive_failures": "failures",
}
"""Series name (after its prefix) -> the WorkerGauges field it fills."""

_LINE = re.compile(r"^([a-z_]+)\{([^}]*)\}\s+(\S+)")
_WORKER_LABEL = re.compile(r'(?:^|,)worker="([^"]*)"')
_TOKEN_REF = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")


def generation_of(rows: list[dict]) -> str | None:
    """Which generation listed ROWS; None when no row tells (an empty list)."""
    for row in rows:
        if "status" in row or "models" in row or "runtime_type" in row:
            return SMG
        if "metadata" in row:
            return SGLANG_ROUTER
    return None


@dataclass(frozen=True)
class WorkerGauges:
    """One worker's gauges as the router's /metrics had them (None: not published, or -1)."""

    healthy: bool | None = None
    breaker: str | None = None
    """closed, open or half-open."""
    inflight: int | None = None
    requests: int | None = None
    """Requests the router has sent this worker since it started (a counter, summed over
    models): how a probe through the gateway is seen reaching it."""
    failures: int | None = None
    """Its breaker's consecutive failures now: a probe that reached it and failed shows here."""


def worker_gauges(text: str) -> dict[str, WorkerGauges]:
    """Worker URL -> its gauges, from a router's Prometheus text."""
    found: dict[str, dict] = {}
    for line in text.splitlines():
        if not line.startswith(PREFIXES):
            continue
        match = _LINE.match(line)
        if match is None:
            continue
        name, labels, raw = match.groups()
        field = next(
            (
                GAUGES[name[len(prefix) :]]
                for prefix in PREFIXES
                if name.startswith(prefix) and name[len(prefix) :] in GAUGES
            ),
            None,
        )
        worker = _WORKER_LABEL.search(labels)
        if field is None or worker is None:
            continue
        try:
            value = float(raw)
        except ValueError:
            continue
        url = worker.group(1).rstrip("/")
        row = found.setdefault(url, {})
        if field == "requests":
            row[field] = row.get(field, 0) + int(value)
        elif value >= 0:  # -1: the gateway let go of this worker's series
            row[field] = value
    return {url: _gauges(row) for url, row in found.items()}


def _gauges(row: dict) -> WorkerGauges:
    health, breaker, inflight = row.get("health"), row.get("breaker"), row.get("inflight")
    return WorkerGauges(
        healthy=None if health is None else health >= 1,
        breaker=None if breaker is None else BREAKER_STATES.get(int(breaker)),
        inflight=None if inflight is None else int(inflight),
        requests=row.get("requests"),
        failures=None if row.get("failures") is None else int(row["failures"]),
    )


def admin_token(router: str, reference: str | None) -> str | None:
    """The bearer token `admin_token: ${VAR}` names, read from the operator's environment when a
    request is sent; an unset variable is an error that names it (never the value)."""
    if reference is None:
        return None
    match = _TOKEN_REF.match(reference)
    if match is None:  # config.routers refuses it: a literal never reaches here from hosts.yaml
        raise RemoteError(f"router {router}", "admin_token must be ${VAR}")
    value = os.environ.get(match.group(1))
    if not value:
        raise RemoteError(
            f"router {router}",
            f"admin_token: ${{{match.group(1)}}} is not set in this console's environment",
        )
    return value
