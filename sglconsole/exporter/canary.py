"""The canary's series (`sglconsole_canary_*`) and SGLang's own warning lines, from each server's
canary log and signal counts (state.canary); the current process's only, absent until asked."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily, Metric

from sglconsole.core.canary import VERDICTS
from sglconsole.state.canary import SIGNALS
from sglconsole.state.fleet import ServerState

PREFIX = "sglconsole_"


def _gauge(name: str, doc: str, labels: list[str], unit: str = "") -> GaugeMetricFamily:
    return GaugeMetricFamily(PREFIX + name, doc, labels=labels, unit=unit)


def canary_metrics(
    servers: list[ServerState], labels_of, labels: list[str], now: float
) -> Iterator[Metric]:
    """labels_of(server): its values for LABELS (host, port, profile)."""
    ok = _gauge(
        "canary_ok",
        "1 when the canary's last run passed (right answers, none looping, none changed), else 0",
        labels,
    )
    verdict = _gauge(
        "canary_verdict",
        "The canary's last verdict as a state set: " + ", ".join(VERDICTS),
        [*labels, "verdict"],
    )
    changed = _gauge(
        "canary_answer_changed",
        "1 when a greedy answer differs from the profile's first one seen, else 0",
        labels,
    )
    silent = _gauge(
        "canary_silent_while_healthy",
        "1 when the canary got no answer while /health said 200, else 0",
        labels,
    )
    failing = _gauge("canary_failing_runs", "Failed canary runs in a row", labels)
    age = _gauge("canary_age", "Seconds since the canary's last run began", labels, "seconds")
    ttft = _gauge("canary_ttft", "The canary's time to first token", labels, "seconds")
    tok_s = _gauge("canary_decode_tokens_per_second", "The canary's decode tok/s", labels)
    skipped = _gauge(
        "canary_skipped",
        "1 while the last due run was skipped (an action runs, or saturated), else 0",
        labels,
    )
    warnings = _gauge(
        "sglang_warning_lines",
        "SGLang's own warning lines of this process lifetime: " + ", ".join(SIGNALS),
        [*labels, "signal"],
    )
    violations = _gauge(
        "sglang_kv_canary_violations",
        "violations=N of SGLang's newest `[canary]` line (--kv-canary log)",
        labels,
    )
    for server in servers:
        values = labels_of(server)
        pid = server.view.pid
        if pid is None:
            continue
        signals = server.signals.of(pid, server.view.started)
        for kind in SIGNALS:
            warnings.add_metric([*values, kind], float(signals.counts.get(kind, 0)))
        if signals.violations is not None:
            violations.add_metric(values, float(signals.violations))
        skipped.add_metric(values, float(server.canary.skipped is not None))
        run = server.canary.current(pid)
        if run is None:
            continue
        ok.add_metric(values, float(run.ok))
        for option in VERDICTS:
            verdict.add_metric([*values, option], float(option == run.verdict))
        changed.add_metric(values, float(bool(run.changed)))
        silent.add_metric(values, float(run.verdict == "TIMEOUT" and run.health_ok))
        failing.add_metric(values, float(server.canary.failing_streak(pid)))
        age.add_metric(values, now - run.time)
        if run.ttft_s is not None:
            ttft.add_metric(values, run.ttft_s)
        if run.tok_s is not None:
            tok_s.add_metric(values, run.tok_s)
    yield from (ok, verdict, changed, silent, failing, age, ttft, tok_s, skipped)
    yield from (warnings, violations)


def router_canary_metrics(routers, now: float) -> Iterator[Metric]:
    """The canary asked through each router (its newest run: a router's runs have no pid)."""
    ok = _gauge(
        "router_canary_ok",
        "1 when the canary's last run through the router passed, else 0",
        ["router"],
    )
    verdict = _gauge(
        "router_canary_verdict",
        "The last verdict of the canary through the router, as a state set: " + ", ".join(VERDICTS),
        ["router", "verdict"],
    )
    failing = _gauge("router_canary_failing_runs", "Failed runs in a row, through it", ["router"])
    age = _gauge("router_canary_age", "Seconds since its last run began", ["router"], "seconds")
    for router in routers:
        run = router.canary.runs[-1] if router.canary.runs else None
        if run is None:
            continue
        ok.add_metric([router.name], float(run.ok))
        for option in VERDICTS:
            verdict.add_metric([router.name, option], float(option == run.verdict))
        failing.add_metric([router.name], float(router.canary.failing_streak(None)))
        age.add_metric([router.name], now - run.time)
    yield from (ok, verdict, failing, age)
