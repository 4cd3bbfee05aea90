"""What every view shows of a server, derived once per update.

The fleet publishes a new `ServerView` for each server of a host whenever something about that
host changes (state.fleet.FleetState.publish, the one door). Tree, detail pane, top bar, CLI tables,
`status --json` and the recorder all read these views instead of computing status, tok/s or load
themselves, so they cannot disagree. The numbers of a view belong to one process: samples and
/metrics pages from before the current pid started are never used, and a server without a
process has none.
"""

from __future__ import annotations

from sglconsole.core.decode_lines import is_current
from sglconsole.core.metrics import ServerMetrics
from sglconsole.state.liveness import fresh_load
from sglconsole.state.model import (
    HostState,
    Load,
    Sample,
    ServerState,
    ServerView,
    reading_is_current,
)
from sglconsole.state.routing import RouterState, derive_routes
from sglconsole.state.status import derive_status, process_samples

METRICS_FRESH_S = 30.0
"""A /metrics page older than this says nothing about now."""
SPARK_SAMPLES = 120


def derive_view(
    server: ServerState,
    host: HostState,
    now: float,
    generation: int,
    routers: dict[str, RouterState] | None = None,
) -> ServerView:
    status, reason = derive_status(server, host, now)
    routes = derive_routes(server, host, routers or {}, server.view.routes, now)
    process = server.process
    if process is None or host.reachable is not True:
        return ServerView(status, reason, generation=generation, at=now, routes=routes)
    started = process.main.start if process.main.pid else None  # 0: first seen, not started
    samples = process_samples(server, limit=SPARK_SAMPLES)
    tok_s, source = _tok_s(server, samples, now)
    differs, count = _drift(server)
    return ServerView(
        status,
        reason,
        pid=process.main.pid or None,  # 0: known by its metrics alone (model.metrics_only_process)
        started=started,
        tok_s=tok_s,
        tok_s_source=source,
        load=_load(server, samples, now),
        throughput=tuple(
            sample.gen_throughput
            for sample in samples
            if not sample.after_idle and sample.gen_throughput is not None
        )[-SPARK_SAMPLES:],
        drift_differs=differs,
        drift_count=count,
        generation=generation,
        at=now,
        routes=routes,
    )


def _tok_s(
    server: ServerState, samples: list[Sample], now: float
) -> tuple[float | None, str | None]:
    live = current_sample(samples, now)
    if live is not None and not live.after_idle:
        return live.gen_throughput, live.source
    rate = metrics_rate(server, now)
    return (None, None) if rate is None else (rate, _page_source(server))


def current_sample(samples: list[Sample], now: float) -> Sample | None:
    """This process's newest decode sample while it still describes now (core.decode_lines' rule:
    SGLang writes none when idle, so the last one must age out), else None."""
    if not samples:
        return None
    newest = samples[-1]
    previous = samples[-2].time if len(samples) > 1 else None
    return newest if is_current(newest.time, previous, now) else None


def _load(server: ServerState, samples: list[Sample], now: float) -> Load | None:
    """Running and queued requests from the server's load endpoint; accept length and token usage
    from this process's decode line while it is current; else from a fresh /metrics page."""
    live, counted = current_sample(samples, now), fresh_load(server, now)
    if live is not None or counted is not None:
        return Load(
            accept_len=live.accept_len if live else None,
            running_req=counted.running if counted else live.running_req,
            queue_req=counted.waiting if counted else live.queue_req,
            token_usage=live.token_usage if live else None,
            source=live.source if live else "loads",
        )
    metrics = fresh_metrics(server, now)
    if metrics is None or not metrics_rate(server, now):
        return (
            None  # no page, or nothing generated since the last one: its gauges are frozen, not now
        )
    running = None if metrics.running_req is None else int(metrics.running_req)
    queued = None if metrics.queue_req is None else int(metrics.queue_req)
    return Load(
        accept_len=metrics.accept_len,
        running_req=running,
        queue_req=queued,
        token_usage=metrics.token_usage,
        source=_page_source(server),
    )


def _page_source(server: ServerState) -> str:
    """Where the /metrics page came from: the server itself, or Prometheus (a process known by
    its metrics alone has pid 0)."""
    return "metrics" if server.process is None or server.process.main.pid else "prometheus"


def fresh_metrics(server: ServerState, now: float) -> ServerMetrics | None:
    """The last /metrics page, if it is recent and was read from the current process."""
    current = reading_is_current(server, server.metrics_at, METRICS_FRESH_S, now)
    return server.metrics if current else None


def metrics_rate(server: ServerState, now: float) -> float | None:
    """Decode tok/s from /metrics: the rate of `generation_tokens_total` between the last two pages
    of this process, less the tokens this console's own requests generated in between (its
    generating health checks and canary answers: an idle server read 0.1-0.6 tok/s of them).
    Never the `gen_throughput` gauge: SGLang sets it only when it logs a decode line, so an idle
    server keeps exporting its last busy figure (a real 0.5.12 said 552 at idle)."""
    current, before = fresh_metrics(server, now), server.metrics_before
    if current is not None and current.generation_tokens_rate is not None:
        return current.generation_tokens_rate  # the same rate, computed where it was scraped
    if (
        current is None
        or before is None
        or server.metrics_before_at is None
        or server.process is None
    ):
        return None
    if server.metrics_before_at < server.process.main.start:
        return None
    tokens, earlier = current.generation_tokens_total, before.generation_tokens_total
    elapsed = server.metrics_at - server.metrics_before_at
    if tokens is None or earlier is None or elapsed <= 0 or tokens < earlier:
        return None  # no counter, or it went back (a restart the watcher has not seen yet)
    own = server.metrics_own[1] - server.metrics_own[0]
    return max(0.0, tokens - earlier - own) / elapsed


def _drift(server: ServerState) -> tuple[bool | None, int | None]:
    report = server.drift
    if report is None:
        return None, None
    return report.differs, report.count
