"""Fleet state: what the console knows about every host and server right now.

Plain dataclasses with one writer (the monitor, plus actions marking what
they are doing); the UI and the CLI read them. Every change calls the
subscribers with (host, port|None) so a UI can batch its refreshes.
"""

from __future__ import annotations

import statistics
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from sglconsole.config import Config, Profile, Server
from sglconsole.core.metrics import ServerMetrics
from sglconsole.core.nvidia_smi import ComputeApp, GpuSample
from sglconsole.core.processes import ProcessView, ServerProcess, flag
from sglconsole.core.sglang_log_record import LogRecord

METRICS_FRESH_S = 30.0
HISTORY = 600  # samples per server: 10 minutes of decode lines at one a second (sparklines, SLOW)
LOG_LINES = 400  # the tail the console shows; whole logs stay on the host (log-stats reads them)
IDLE_GAP_S = 30.0
SLOW_WINDOW_S = 60.0
SLOW_MIN_SAMPLES = 3
LOOP_SAMPLES = 5


class Status(StrEnum):
    UP = "UP"
    STARTING = "STARTING"
    DOWN = "DOWN"
    DRIFT = "DRIFT"
    SLOW = "SLOW"
    DEGENERATE = "DEGENERATE"
    LOOPING = "LOOPING"
    UNMANAGED = "UNMANAGED"
    UNREACHABLE = "UNREACHABLE"
    UNKNOWN = "UNKNOWN"


# worst first: the terminal title and the host badge show the worst one
SEVERITY = [Status.UNREACHABLE, Status.DEGENERATE, Status.DOWN, Status.LOOPING, Status.SLOW, Status.DRIFT,
            Status.STARTING, Status.UNMANAGED, Status.UNKNOWN, Status.UP]


def worst(statuses) -> Status:
    present = set(statuses)
    return next((s for s in SEVERITY if s in present), Status.UP)


@dataclass(frozen=True, slots=True)
class Sample:
    time: float
    gen_throughput: float | None
    accept_len: float | None
    accept_rate: float | None
    running_req: int | None
    queue_req: int | None
    token_usage: float | None
    after_idle: bool
    """The first decode line after an idle period: SGLang's interval makes its tok/s meaningless."""


@dataclass
class ServerState:
    host: str
    port: int
    config: Server | None
    profile: Profile | None
    profile_name: str | None
    process: ServerProcess | None = None
    log_path: str | None = None
    log_state: str | None = None
    history: deque[Sample] = field(default_factory=lambda: deque(maxlen=HISTORY))
    log_lines: deque[str] = field(default_factory=lambda: deque(maxlen=LOG_LINES))
    last_decode: LogRecord | None = None
    last_decode_at: float | None = None
    ready_seen_at: float | None = None
    milestones: deque[tuple[float, str]] = field(default_factory=lambda: deque(maxlen=50))
    errors: deque[tuple[float, str]] = field(default_factory=lambda: deque(maxlen=50))
    health: str | None = None
    server_info: dict | None = None
    version: str | None = None
    probe: object | None = None
    drift: object | None = None
    """A sglconsole.core.drift.Report once the host's SGLang compared the running argv with the profile."""
    drift_error: str | None = None
    metrics: ServerMetrics | None = None
    """What /metrics said last, when the server was launched with --enable-metrics."""
    metrics_at: float | None = None
    action: str | None = None
    status: Status = Status.UNKNOWN
    reason: str = ""

    @property
    def key(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def managed(self) -> bool:
        return self.config is not None

    def tok_s(self) -> float | None:
        for sample in reversed(self.history):
            if not sample.after_idle:
                return sample.gen_throughput
        # no decode line read (a log the console cannot follow): what /metrics says, while fresh
        metrics = self.fresh_metrics()
        return None if metrics is None else metrics.gen_throughput

    def fresh_metrics(self) -> ServerMetrics | None:
        if self.metrics is not None and self.metrics_at is not None and time.time() - self.metrics_at < METRICS_FRESH_S:
            return self.metrics
        return None

    def uptime(self, now: float | None = None) -> float | None:
        return None if self.process is None else (now or time.time()) - self.process.main.start

    def load(self) -> Load | None:
        """Accept length, running/queued requests and token usage: from the newest decode line, else
        from a fresh /metrics page."""
        last = self.history[-1] if self.history else None
        if last is not None:
            return Load(last.accept_len, last.running_req, last.queue_req, last.token_usage, "log")
        m = self.fresh_metrics()
        if m is None:
            return None
        running = None if m.running_req is None else int(m.running_req)
        queued = None if m.queue_req is None else int(m.queue_req)
        return Load(m.accept_len, running, queued, m.token_usage, "metrics")


@dataclass(frozen=True)
class Load:
    accept_len: float | None
    running_req: int | None
    queue_req: int | None
    token_usage: float | None
    source: str
    """'log' (a decode line) or 'metrics' (SGLang's /metrics page)."""


@dataclass
class HostState:
    name: str
    reachable: bool | None = None
    error: str | None = None
    since: float | None = None
    retry_at: float | None = None
    gpus: list[GpuSample] = field(default_factory=list)
    gpu_error: str | None = None
    gpu_time: float | None = None
    apps: list[ComputeApp] = field(default_factory=list)
    view: ProcessView | None = None
    servers: dict[int, ServerState] = field(default_factory=dict)
    watcher_error: str | None = None

    @property
    def gpu_model(self) -> str | None:
        return self.gpus[0].name if self.gpus else None


Listener = Callable[[str, int | None], None]


class FleetState:
    def __init__(self, config: Config):
        self.config = config
        self.hosts: dict[str, HostState] = {}
        self._listeners: list[Listener] = []
        for name, host in config.hosts.items():
            state = HostState(name)
            for server in host.servers:
                state.servers[server.port] = ServerState(
                    name, server.port, server, config.profiles.get(server.profile), server.profile, log_path=server.log
                )
            self.hosts[name] = state

    # ------------------------------------------------------------ listeners

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def changed(self, host: str, port: int | None = None) -> None:
        for listener in list(self._listeners):
            listener(host, port)

    # --------------------------------------------------------------- access

    def server(self, host: str, port: int) -> ServerState | None:
        state = self.hosts.get(host)
        return state.servers.get(port) if state else None

    def all_servers(self) -> list[ServerState]:
        return [s for h in self.hosts.values() for s in h.servers.values()]

    def worst(self) -> Status:
        return worst(s.status for s in self.all_servers())

    # ------------------------------------------------------------- updating

    def refresh_status(self, host: str, now: float | None = None) -> None:
        now = now or time.time()
        hstate = self.hosts[host]
        for server in hstate.servers.values():
            server.status, server.reason = derive_status(server, hstate, now)


def record_decode(server: ServerState, record: LogRecord, now: float) -> None:
    previous = server.last_decode
    gap = None if server.last_decode_at is None else now - server.last_decode_at
    if record.time is not None and previous is not None and previous.time is not None:
        gap = (record.time - previous.time).total_seconds()
    after_idle = previous is None or (previous.running_req or 0) == 0 or (gap is not None and gap > IDLE_GAP_S)
    when = record.time.timestamp() if record.time is not None else now
    server.history.append(
        Sample(when, record.gen_throughput, record.accept_len, record.accept_rate, record.running_req,
               record.queue_req, record.token_usage, after_idle)
    )
    server.last_decode = record
    server.last_decode_at = now


# ------------------------------------------------------------------ status


def derive_status(server: ServerState, host: HostState, now: float) -> tuple[Status, str]:
    if host.reachable is False:
        return Status.UNREACHABLE, host.error or "unreachable"
    if host.reachable is None or host.view is None:
        return Status.UNKNOWN, "connecting"
    if server.process is None:
        if server.action:
            return Status.STARTING, server.action
        return Status.DOWN, "configured but not running"
    if not server.managed:
        return Status.UNMANAGED, "running but not in hosts.yaml"
    started = server.process.main.start
    if server.health != "ok" and (server.ready_seen_at is None or server.ready_seen_at < started - 1):
        return Status.STARTING, server.action or "starting"
    verdict = getattr(server.probe, "verdict", None)
    if verdict == "DEGENERATE" and getattr(server.probe, "pid", None) == server.process.main.pid:
        return Status.DEGENERATE, "the probe's answer loops"
    if looping(server):
        return Status.LOOPING, "accept rate pinned at its ceiling while requests run (repeating output)"
    slow = slowness(server, now)
    if slow:
        return Status.SLOW, slow
    drift = server.drift
    if drift is not None and getattr(drift, "differs", False):
        return Status.DRIFT, getattr(drift, "summary", "argv differs from the profile")
    return Status.UP, "serving"


def busy_samples(server: ServerState, now: float, window: float = SLOW_WINDOW_S) -> list[Sample]:
    """Decode samples of the last minute while requests ran — of this process only (a restore
    must not stay SLOW for a minute on the old server's numbers)."""
    since = max(now - window, _started(server))
    return [s for s in _newest_since(server.history, since) if (s.running_req or 0) > 0 and not s.after_idle]


def _newest_since(history, since: float) -> list[Sample]:
    """Samples at or after `since`, newest first (walks back from the end: status runs at every change)."""
    out = []
    for sample in reversed(history):
        if sample.time < since:
            break
        out.append(sample)
    return out


def _started(server: ServerState) -> float:
    # log timestamps have whole seconds: a line of this process may carry the second it started in
    return server.process.main.start - 1 if server.process is not None else 0.0


def slowness(server: ServerState, now: float) -> str | None:
    """Why the server is SLOW, or None: median tok/s of the last minute under the baseline."""
    profile = server.profile
    if profile is None or profile.baseline is None:
        return None
    samples = [s for s in busy_samples(server, now) if s.gen_throughput is not None]
    if len(samples) < SLOW_MIN_SAMPLES:
        return None
    median = statistics.median(s.gen_throughput for s in samples)
    running = statistics.median(s.running_req or 1 for s in samples)
    baseline = baseline_for(profile, running)
    if baseline is None:
        return None
    limit = baseline * profile.baseline.slow_fraction
    if median < limit:
        return f"{median:.1f} tok/s, baseline {baseline:g} (under {profile.baseline.slow_fraction:.0%})"
    return None


def nearest_baseline(profile: Profile, running: float) -> tuple[float, int] | None:
    """(aggregate tok/s, concurrency) of the baseline measured nearest to `running` requests."""
    baseline = profile.baseline
    if baseline is None:
        return None
    if baseline.levels:
        level = min(baseline.levels, key=lambda lv: abs(lv.concurrency - running))
        return level.gen_throughput, level.concurrency
    return (baseline.gen_throughput, baseline.concurrency or 1) if baseline.gen_throughput else None


def baseline_for(profile: Profile, running: float) -> float | None:
    """The baseline tok/s at the concurrency nearest to what is running now."""
    nearest = nearest_baseline(profile, running)
    return nearest[0] if nearest else None


def per_request_baseline(profile: Profile, running: float) -> float | None:
    """tok/s one request should see, from the baseline at the nearest concurrency."""
    nearest = nearest_baseline(profile, running)
    return nearest[0] / nearest[1] if nearest else None


def looping(server: ServerState) -> bool:
    samples = [s for s in _newest_since(server.history, _started(server)) if (s.running_req or 0) > 0][:LOOP_SAMPLES]
    if len(samples) < LOOP_SAMPLES or server.process is None:
        return False
    draft = flag(server.process.args, "--speculative-num-draft-tokens")
    ceiling = float(draft) if draft and draft.replace(".", "", 1).isdigit() else None

    def pinned(sample: Sample) -> bool:
        if sample.accept_rate is not None and sample.accept_rate >= 0.98:
            return True
        return ceiling is not None and sample.accept_len is not None and sample.accept_len >= ceiling - 0.01

    # one window diluted by a short request (a health check) must not hide the loop
    return sum(pinned(s) for s in samples) >= LOOP_SAMPLES - 1


def gpu_holders(host: HostState) -> dict[int, str]:
    """GPU index -> who holds it (":30000", "pid N (no server)"; -1: orphans)."""
    holders: dict[int, list[str]] = {}
    for server in host.servers.values():
        if server.process is not None:
            for index in server.process.gpus:
                holders.setdefault(index, []).append(f":{server.port}")
    if host.view is not None:
        uuid_to_index = {g.uuid: g.index for g in host.gpus}
        for app in host.view.unaccounted:
            index = uuid_to_index.get(app.gpu_uuid)
            if index is not None:
                holders.setdefault(index, []).append(f"pid {app.pid} (no server)")
        for orphan in host.view.orphans:
            holders.setdefault(-1, []).append(f"orphan {orphan.pid}")
    return {k: ", ".join(v) for k, v in holders.items()}
