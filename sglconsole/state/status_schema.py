"""The shape of `status --json` (and of each line of `status --watch --json`), as pydantic models.

`sglconsole schema status` prints their JSON Schema; the tests validate real `status --json`
output against them (extra keys are errors), so this stays what json_view writes.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from sglconsole.state.json_view import SCHEMA_VERSION
from sglconsole.state.model import Status
from sglconsole.state.precursors.status_schema import (
    StatusGpuHealth,
    StatusKernelLog,
    StatusMemory,
    StatusSign,
)
from sglconsole.state.routing import Routing


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class StatusGpu(_Model):
    index: int
    name: str | None = None
    uuid: str | None = None
    util: float | None = None
    """GPU utilisation, percent."""
    mem_used_mib: float | None = None
    mem_total_mib: float | None = None
    temperature_c: float | None = None
    power_w: float | None = None


class StatusChild(_Model):
    pid: int
    title: str
    """The process title, e.g. sglang::scheduler_TP0."""
    state: str | None = None
    """Its state letter in /proc (R, S, D, Z, ...)."""


class StatusOrphan(_Model):
    pid: int
    ppid: int | None = None
    title: str


class StatusWeightCache(_Model):
    """A weight-cache daemon (`python -m sglang.srt.weight_cache.daemon`, SGLang 0.5.17+): it
    holds a model's weights in GPU memory across server restarts, by design."""

    pid: int
    model: str
    gpus: list[int] = []
    gpu_mem_mib: int = 0


class StatusRoute(_Model):
    """The server's place in one router in front of it."""

    router: str
    url: str
    """The URL the router knows this server by."""
    routing: Routing
    """'serving nobody': up and answering but not in the router's worker list; 'in router but
    down': listed while the server is down or does not answer; 'out for an action': taken out
    by this console's kill/relaunch/restore/rollback, on purpose."""
    problem: bool
    """serving nobody, in router but down, or in router with its breaker open."""
    healthy: bool | None = None
    """The router's is_healthy for it (null: not listed)."""
    load: int | None = None
    """The router's count of requests in flight to it (sglang-router counts under cache_aware)."""
    since: float | None = None
    """Unix time it entered this state, as far as this console watched."""
    breaker: str | None = None
    """The gateway's circuit breaker for it: closed, open or half-open (null: not known, e.g. no
    metrics_port); 'in router, breaker open' is a problem."""
    inflight: int | None = None
    """Requests in flight to it as the gateway's /metrics counts them (null: not known)."""


# ---- the canary (issue 27; state.canary) -------------------------------------------------------


class StatusCanaryAnswer(_Model):
    prompt: str
    """The prompt's short name (arith, capital, weekday)."""
    expected: str
    """A word the answer must contain."""
    answer: str | None = None
    """What the server said (null: nothing came)."""
    verdict: str
    """OK, WRONG, DEGENERATE, TIMEOUT or ERROR (an HTTP error)."""
    reason: str = ""
    digest: str | None = None
    """sha256 of the answer, first 12 hex digits."""
    ttft_s: float | None = None
    tok_s: float | None = None


class StatusCanarySkip(_Model):
    at: float
    reason: str
    """Why a due run did not ask (an action on it, saturated past --max-running-requests)."""


class StatusCanary(_Model):
    """The canary's last run on the current process (null verdict: none yet)."""

    verdict: str | None = None
    """The worst answer's verdict."""
    ok: bool | None = None
    """Right answers, none looping, none changed since the profile's first."""
    finding: str | None = None
    """The problem in one line (a TIMEOUT while /health says 200 says so)."""
    at: float | None = None
    age_s: float | None = None
    via: str | None = None
    """'forward' (the SSH port forward)."""
    ttft_s: float | None = None
    tok_s: float | None = None
    history: str = ""
    """This process's runs, oldest first: ✓ passed, ✗ failed."""
    failing_streak: int = 0
    skipped: StatusCanarySkip | None = None
    answers: list[StatusCanaryAnswer] = []


class StatusSignal(_Model):
    count: int
    """Lines of this process lifetime."""
    last_at: float | None = None


class StatusSignals(_Model):
    """SGLang's own warning lines in the server's log, this process lifetime."""

    kv_canary: StatusSignal
    """`[canary] ... violations=N` lines with N > 0 (--kv-canary log)."""
    nan_logits: StatusSignal
    """`Detected errors during sampling! NaN in the logits.`"""
    health_check_failed: StatusSignal
    """`Health check failed ...`"""
    kv_canary_violations: int | None = None
    """The KV canary's newest violations=N (null: no such line)."""


class StatusRouterWorker(_Model):
    url: str
    id: str | None = None
    healthy: bool
    load: int | None = None
    breaker: str | None = None
    """closed, open or half-open, from the router's /metrics (null: not known)."""
    inflight: int | None = None
    server: str | None = None
    """HOST:PORT in hosts.yaml this worker is (null: a worker hosts.yaml does not name)."""


class StatusRouter(_Model):
    where: str
    """host:port (through SSH) or the URL it is reached at."""
    reachable: bool | None = None
    error: str | None = None
    asked_at: float | None = None
    """Unix time its worker list was asked for."""
    kind: str | None = None
    """sglang-router or smg (as hosts.yaml says, else detected; null: not known yet)."""
    workers: list[StatusRouterWorker] = []
    """Its GET /workers (the last answer, when unreachable now)."""
    canary: StatusCanary | None = None
    """The canary asked through the router, as its clients ask (schema 1.5)."""


class StatusContainer(_Model):
    """The Docker or Podman container a server runs in (schema 1.6)."""

    engine: str
    """docker or podman."""
    name: str
    id: str
    image: str | None = None
    """The image as the container was given it (a tag)."""
    image_id: str | None = None
    """sha256:... of the image that runs (what a re-pull of the tag changes)."""
    repo_digests: list[str] | None = None
    sglang_version: str | None = None
    """The SGLang inside, by the container's own python (null: not known yet)."""
    started_at: str | None = None
    restart_policy: str | None = None
    restart_count: int | None = None
    gpus: list[str] | None = None
    """GPUs the engine gives it (device requests, CDI, NVIDIA_VISIBLE_DEVICES); ["all"]."""
    network: str | None = None
    shm_size: int | None = None
    """Bytes."""
    ipc: str | None = None


class StatusEngine(_Model):
    state: str
    """absent, ok, denied or error (by the host's own CLI)."""
    detail: str | None = None


class StatusServer(_Model):
    port: int
    profile: str | None = None
    managed: bool
    """Configured in hosts.yaml (an unmanaged server was found running on the host)."""
    status: Status
    reason: str | None = None
    pid: int | None = None
    argv: list[str] | None = None
    """The running command line, secrets masked."""
    env: dict[str, str] | None = None
    """Its environment as launched, secrets masked."""
    gpus: list[int] | None = None
    children: list[StatusChild] = []
    tok_s: float | None = None
    """Decode tokens per second."""
    accept_len: float | None = None
    running_req: int | None = None
    queue_req: int | None = None
    load_source: str | None = None
    metrics: dict[str, Any] | None = None
    """The server's /metrics page, parsed."""
    uptime_s: float | None = None
    version: str | None = None
    health: str | None = None
    log: str | None = None
    drift: bool | None = None
    """Whether it differs from its profile (null: not known)."""
    drift_count: int | None = None
    generation: int
    stale_s: float | None = None
    """Seconds since these numbers were read, when the source (Prometheus) has not answered since;
    null: current."""
    routers: list[StatusRoute] = []
    """One entry per router in front of it (hosts.yaml `routers:`)."""
    canary: StatusCanary | None = None
    """The canary (schema 1.5; null: not asked yet, or a one-shot status)."""
    sglang_signals: StatusSignals | None = None
    """SGLang's own warnings, counted (schema 1.5)."""
    rss_mib: float | None = None
    """Resident memory of its whole process tree (ranks and children), MiB (schema 1.5)."""
    rss_slope_mib_min: float | None = None
    """Its trend, MiB per minute (this process's readings only)."""
    container: StatusContainer | None = None
    """The container it runs in (schema 1.6; null: none)."""


class StatusHost(_Model):
    reachable: bool | None = None
    error: str | None = None
    gpu_error: str | None = None
    gpus: list[StatusGpu] = []
    servers: list[StatusServer] = []
    orphans: list[StatusOrphan] = []
    unaccounted_gpu_pids: list[int] = []
    notes: list[str] = []
    weight_cache_daemons: list[StatusWeightCache] = []
    """GPU memory held by design (schema 1.4)."""
    memory: StatusMemory = StatusMemory()
    kernel_log: StatusKernelLog = StatusKernelLog()
    gpu_health: list[StatusGpuHealth] = []
    gpu_health_error: str | None = None
    signs: list[StatusSign] = []
    """Signs before an outage now, one per server they hit (schema 1.5)."""
    container_engines: dict[str, StatusEngine] = {}
    """docker / podman on the host, by its own CLI (schema 1.6)."""


class StatusJson(_Model):
    """`sglconsole status --json`: the fleet as the console sees it."""

    schema_version: str = Field(examples=[SCHEMA_VERSION])
    """Grows its minor part when a key is added, its major part when a key changes or goes."""
    generated_at: float
    """Unix time."""
    generated_at_iso: str
    generation: int
    hosts: dict[str, StatusHost]
    worst: Status
    """The worst status in the fleet."""
    routers: dict[str, StatusRouter] = {}
    """Every router in hosts.yaml and its worker list."""
    drift_not_known: list[str] = []
    """HOST:PORT of servers whose drift the host's SGLang had not judged in time."""


def status_schema() -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **StatusJson.model_json_schema(),
    }
