"""The fleet's data: what the console knows about every host and server right now.

Plain dataclasses with one writer (the monitor, plus actions marking what
they are doing); the UI and the CLI read them. Every change is published
through one door (state.fleet.FleetState.publish), which tells the
subscribers (host, port|None) so a UI can batch its refreshes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING

from sglconsole.config import Profile, Server
from sglconsole.core.containers import ContainerInfo
from sglconsole.core.decode_lines import IdleWatch
from sglconsole.core.drift import Report
from sglconsole.core.log_owner import LogOwner
from sglconsole.core.metrics import ServerMetrics
from sglconsole.core.nvidia_smi import ComputeApp, GpuSample
from sglconsole.core.probe_result import ProbeResult
from sglconsole.core.processes import ProcessView, ProcInfo, ServerProcess
from sglconsole.core.server_load import RequestLoad
from sglconsole.state.canary import CanaryLog, SignalCounts
from sglconsole.state.precursors import HostSigns
from sglconsole.state.statuses import SEVERITY, Status, worst  # noqa: F401 - its readers import them here

if TYPE_CHECKING:
    from sglconsole.state.routing import RouteView

HISTORY = 600  # samples per server: 10 minutes of decode lines at one a second (sparklines, SLOW)
LOG_LINES = 400  # the tail the console shows; whole logs stay on the host (log-stats reads them)
SLOW_WINDOW_S = 60.0
SLOW_MIN_SAMPLES = 3
LOOP_SAMPLES = 5
STALL_S = 30.0  # no batch line this long while requests are in flight: STALLED
GENERATE_BOUND_S = 20.0  # SGLang's own health-check timeout: a /health (it generates) unanswered
# this long means the scheduler makes no progress (its log then says "Health check failed")


@dataclass(frozen=True, slots=True, kw_only=True)
class Sample:
    time: float
    gen_throughput: float | None
    accept_len: float | None
    accept_rate: float | None
    running_req: int | None
    queue_req: int | None
    token_usage: float | None
    after_idle: bool
    """The first decode line after an idle period (core.decode_lines): its tok/s spans the pause."""
    pid: int | None = None
    """The process that wrote it, when the log said (core.log_owner); None: not known."""
    source: str = "log"
    """'log' (a decode line) or 'prometheus' (one scrape of SGLang's series, tok/s its irate)."""


@dataclass(frozen=True, kw_only=True)
class Load:
    accept_len: float | None
    running_req: int | None
    queue_req: int | None
    token_usage: float | None
    source: str
    """'log' (a decode line) or 'metrics' (SGLang's /metrics page)."""


@dataclass(frozen=True)
class OperatorStop:
    """An operator's stop of a server, from the audit log: a DOWN it explains is no crash."""

    user: str
    action: str
    ended_at: float
    """Epoch seconds the stop ended."""


StopLookup = Callable[[str, int], "OperatorStop | None"]
"""(host, port) -> the operator's stop that is the server's last action, if that is what it was."""


def no_stops(host: str, port: int) -> OperatorStop | None:
    return None


@dataclass(frozen=True)
class ServerView:
    """What every view shows of a server, published once per update (state.server_view)."""

    status: Status = Status.UNKNOWN
    reason: str = "connecting"
    _: KW_ONLY
    pid: int | None = None
    started: float | None = None
    """The process's start time (epoch seconds): uptime is measured from it at draw time."""
    tok_s: float | None = None
    """Decode tok/s of the newest decode line of this process that follows a busy one."""
    tok_s_source: str | None = None
    load: Load | None = None
    throughput: tuple[float, ...] = ()
    """This process's decode tok/s, oldest first (sparklines)."""
    drift_differs: bool | None = None
    """None: not compared yet (or not running)."""
    drift_count: int | None = None
    generation: int = 0
    at: float = 0.0
    stale_since: float | None = None
    """When the numbers shown were last read, if the source has not answered since (Prometheus
    unreachable): they are old, and say so."""
    routes: tuple[RouteView, ...] = ()
    """Its place in each router in front of it (state.routing), in hosts.yaml's order."""

    def uptime(self, now: float) -> float | None:
        return None if self.started is None else now - self.started


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
    decode_watch: IdleWatch = field(default_factory=IdleWatch)
    """The previous decode line of each rank (core.decode_lines): which line follows idle."""
    ready_seen_at: float | None = None
    milestones: deque[tuple[float, str]] = field(default_factory=lambda: deque(maxlen=50))
    errors: deque[tuple[float, str]] = field(default_factory=lambda: deque(maxlen=50))
    written_at: float | None = None
    """When the newest line that says its time was written: a line that does not say (a
    traceback's body) was written then, not when it was read."""
    log_pid: int | None = None
    """The process writing the log now, by its last `Started server process [PID]` line."""
    log_owner: LogOwner = field(default_factory=LogOwner)
    """Who wrote the lines read so far (core.log_owner): sets log_pid."""
    gone_pid: int | None = None
    """The pid the watcher last saw serving this port before it went (process_gone): a process
    that comes after a gap (a container's restart, a relaunch) replaces it all the same."""
    replaced_pids: set[int] = field(default_factory=set)
    """Pids that served this port before the current process: a late line of theirs (a
    container's follow of its old start ends after the new start's first line) is no sample."""
    batch_at: tuple[float, int | None] | None = None
    """(stamp, writer) of the newest decode or prefill line: the scheduler's last sign of work."""
    health_warnings: deque[tuple[float, int | None]] = field(
        default_factory=lambda: deque(maxlen=20)
    )
    """(stamp, writer) of SGLang's own `Health check failed ...` lines."""
    load: RequestLoad | None = None
    """Running and waiting requests by the server's load endpoint (/v1/loads)."""
    load_at: float | None = None
    busy_since: float | None = None
    """Since when the load endpoint has said requests are in flight, without a break."""
    generate_sent_at: float | None = None
    """When the generating health check now waiting for its answer was sent (None: none waits)."""
    generate_ok_at: float | None = None
    """When a generating health check last answered 200: the scheduler worked then."""
    own_tokens: int = 0
    """Tokens this console's own requests made this process generate, all counted in its
    generation_tokens_total: one per generating /health (max_new_tokens=1), and the canary's
    answers' (their meta_info). Not its clients'."""
    health: str | None = None
    answered_at: float | None = None
    """When the server last answered HTTP (health or liveness) with 200."""
    server_info: dict | None = None
    version: str | None = None
    probe: ProbeResult | None = None
    """The last probe's verdict (actions.probe); its pid says which process it judged."""
    drift: Report | None = None
    """Once the host's SGLang compared the running argv with the profile."""
    drift_error: str | None = None
    metrics: ServerMetrics | None = None
    """What /metrics said last, when the server was launched with --enable-metrics."""
    metrics_at: float | None = None
    metrics_before: ServerMetrics | None = None
    """The page before `metrics`: its counters give rates (SGLang's gauges freeze between decode
    lines)."""
    metrics_before_at: float | None = None
    metrics_own: tuple[int, int] = (0, 0)
    """`own_tokens` when `metrics_before` and `metrics` were read: the pages' own share."""
    action: str | None = None
    action_found_pid: int | None = None
    """The pid that ran when this console's action began: any other process under the action is
    the action's own, verifying until the action's verdict."""
    absent: tuple[Status, str] | None = None
    """What a source without SSH (Prometheus) says of a server it sees no process of: DOWN when
    its scrape fails, UNKNOWN when nothing scrapes it."""
    stopped: OperatorStop | None = None
    """The operator's stop (audit log) that is its last action: why it is not running."""
    action_ended: float | None = None
    """When this console's last action on it ended (a router list read before is stale)."""
    view: ServerView = field(default_factory=ServerView)
    """What every view shows (status, reason, tok/s, load), published by
    FleetState.publish."""
    canary: CanaryLog = field(default_factory=CanaryLog)
    """The canary's runs (remote.feeds.canary), each with the pid it asked."""
    signals: SignalCounts = field(default_factory=SignalCounts)
    """SGLang's own warning lines of the lifetime writing the log (state.canary)."""
    container: ContainerInfo | None = None
    """The Docker/Podman container its process runs in (remote.feeds.containers); None: none."""
    container_version: str | None = None
    """The SGLang version inside that container, by the container's own python (None: unknown)."""

    @property
    def key(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def managed(self) -> bool:
        return self.config is not None

    @property
    def status(self) -> Status:
        return self.view.status

    @property
    def reason(self) -> str:
        return self.view.reason

    def new_process(self, process: ServerProcess) -> None:
        """A different pid serves this port: nothing measured from the one before belongs to it.

        Samples already read stay when no process was known before (the log tail read at connect);
        the views keep only those stamped after this process started (state.server_view)."""
        before = self.process.main.pid if self.process is not None else self.gone_pid
        self.gone_pid = None
        if before is not None:  # keep only what the log already said is the new pid's
            if before != process.main.pid:
                self.replaced_pids.add(before)
            self.replaced_pids.discard(process.main.pid)
            kept = [sample for sample in self.history if sample.pid == process.main.pid]
            self.history.clear()
            self.history.extend(kept)
        if self.process is not None:
            self._lifetime_over()
        self.process = process
        self.server_info = self.version = self.health = self.drift = self.metrics = (
            self.metrics_at
        ) = None
        self.metrics_before = self.metrics_before_at = self.answered_at = None
        self.drift_error = None
        self.load = self.load_at = self.busy_since = None
        self.generate_sent_at = self.generate_ok_at = None
        self.own_tokens, self.metrics_own = 0, (0, 0)

    def take_page(self, page: ServerMetrics | None, now: float) -> None:
        """A /metrics page read at NOW (over HTTP or from Prometheus): the last one becomes the one
        before, with the console's own token count at each (state.server_view.metrics_rate)."""
        self.metrics_before, self.metrics_before_at = self.metrics, self.metrics_at
        self.metrics, self.metrics_at = page, now
        self.metrics_own = (self.metrics_own[1], self.own_tokens)

    def process_gone(self) -> None:
        """The watcher no longer sees a process on this port (stopped, or restarting)."""
        if self.process is not None:
            self.gone_pid = self.process.main.pid
            self._lifetime_over()  # what a new start writes before the watcher finds it is its own
        self.process = None

    def _lifetime_over(self) -> None:
        self.decode_watch = IdleWatch()
        self.milestones.clear()  # the start-up progress shown is the next process's


def reading_is_current(
    server: ServerState, taken_at: float | None, limit_s: float, now: float
) -> bool:
    """Whether a reading (a /metrics page, a load answer) taken at `taken_at` is the current
    process's (taken after it started) and younger than `limit_s`: numbers belong to one process
    and age."""
    return (
        taken_at is not None
        and server.process is not None
        and now - taken_at < limit_s
        and taken_at >= server.process.main.start
    )


def metrics_only_process(port: int, start: float) -> ServerProcess:
    """A server known by its metrics alone (Prometheus, no SSH): running since `start` as far as
    the console can tell, with no pid, argv or GPUs (pid 0 is shown as none)."""
    main = ProcInfo(0, 0, 0, 0, "R", "", (), start, 0, main=True)
    return ServerProcess(main, port, (), (), 0)


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
    signs: HostSigns = field(default_factory=HostSigns)
    """Memory, kernel log and GPU health signs before an outage (state.precursors)."""
    engines: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    """Container engine -> (absent | ok | denied | error, detail), by the host's own CLI."""
    containers: tuple[ContainerInfo, ...] = ()
    """Every container of every engine on the host, as last inspected."""
    source: str | None = None
    """Who reads the views when it is not this console's own SSH session ("prometheus"): that
    source publishes them through FleetState.publish with its own deriver; anyone else's
    publication of the host only re-reads their routes."""

    @property
    def gpu_model(self) -> str | None:
        return self.gpus[0].name if self.gpus else None
