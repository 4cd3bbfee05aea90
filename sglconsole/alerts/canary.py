"""Alerts on the canary's findings: wrong, looping, silent or changed answers (state.canary).

Not a status of the server (a server can be UP and answer wrong), so they are watched apart from
the status tracker, like a server's place in its router (alerts.routes). Hysteresis in runs, not
seconds: a finding is news once FAIL_RUNS runs of one process in a row failed (one slow answer
under a burst is no outage), and its end once RECOVER_RUNS runs in a row passed; a finding
alerted is told once, however long it lasts.

SGLang's own warnings (state.canary's signals: KV canary violations, NaN in the logits) are news
the first time a process lifetime logs them (`canary` = KV_CANARY or NAN_LOGITS), and over when
another lifetime runs without them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sglconsole.state.canary import FAIL_RUNS
from sglconsole.state.fleet import FleetState

RECOVER_RUNS = 2
WARNINGS = {"kv_canary": "KV_CANARY", "nan_logits": "NAN_LOGITS"}
"""SGLang's warning lines that are news, by the word their alert carries."""


@dataclass
class CanaryWatch:
    fail_runs: int = FAIL_RUNS
    recover_runs: int = RECOVER_RUNS
    told: dict[tuple[str, int], str] = field(default_factory=dict)
    """(host, port) -> the verdict alerted and not yet over."""
    warned: dict[tuple[str, int, str], int] = field(default_factory=dict)
    """(host, port, signal) -> the pid whose warning lines were alerted."""
    routers_told: dict[str, str] = field(default_factory=dict)
    """router name -> the verdict alerted through it and not yet over."""


def passing_streak(runs, pid: int | None) -> int:
    count = 0
    for run in reversed(runs):
        if run.pid != pid or not run.ok:
            break
        count += 1
    return count


def turn(history, run, pid: int | None, told: str | None, watch: CanaryWatch) -> str | None:
    """What one canary's newest run RUN (of process PID) makes news: the word of a finding that
    held `fail_runs` runs in a row, "OK" when the one TOLD is over (`recover_runs` passed in a
    row), else None. One hysteresis for a server's canary and one asked through a router."""
    if told is None and not run.ok and history.failing_streak(pid) >= watch.fail_runs:
        return run.verdict if run.verdict != "OK" else "CHANGED"
    if told is not None and passing_streak(history.runs, pid) >= watch.recover_runs:
        return "OK"
    return None


def canary_news(fleet: FleetState, watch: CanaryWatch, make_alert) -> list:
    """Alerts (built by `make_alert(host, server, verdict, reason, signal=None)`) for findings
    that held `fail_runs` runs, and for the end of each one alerted; then SGLang's warnings."""
    found = []
    for host in fleet.hosts.values():
        for server in host.servers.values():
            key, pid = (host.name, server.port), server.view.pid
            run = server.canary.current(pid)
            word = run and turn(server.canary, run, pid, watch.told.get(key), watch)
            if word == "OK":
                del watch.told[key]
                found.append(make_alert(host, server, "OK", "the canary's answers are right again"))
            elif word:
                watch.told[key] = word
                found.append(make_alert(host, server, word, run.finding or word))
    return found + warning_news(fleet, watch, make_alert)


def router_canary_news(fleet: FleetState, watch: CanaryWatch, make_alert) -> list:
    """The same for the canary asked through each router (its runs have no pid: the router picks
    the worker), built by `make_alert(router_name, verdict, reason)`."""
    found = []
    for name, router in fleet.routers.items():
        runs = router.canary.runs
        word = runs and turn(router.canary, runs[-1], None, watch.routers_told.get(name), watch)
        if word == "OK":
            del watch.routers_told[name]
            found.append(make_alert(name, "OK", "the canary's answers through it are right again"))
        elif word:
            watch.routers_told[name] = word
            found.append(make_alert(name, word, runs[-1].finding or runs[-1].verdict))
    return found


def warning_news(fleet: FleetState, watch: CanaryWatch, make_alert) -> list:
    found = []
    for host in fleet.hosts.values():
        for server in host.servers.values():
            pid = server.view.pid
            signals = server.signals.of(pid, server.view.started)
            for kind, word in WARNINGS.items():
                key = (host.name, server.port, kind)
                count = signals.counts.get(kind, 0)
                if count and pid is not None and watch.warned.get(key) != pid:
                    watch.warned[key] = pid
                    said = (
                        f"SGLang's KV canary found {signals.violations} violations"
                        if kind == "kv_canary"
                        else f"SGLang logged NaN in the logits {count} times"
                    )
                    found.append(make_alert(host, server, word, f"{said} (pid {pid})", kind))
                elif not count and key in watch.warned and watch.warned[key] != pid and pid:
                    del watch.warned[key]
                    found.append(
                        make_alert(host, server, "OK", f"pid {pid} logs no {kind} line", kind)
                    )
    return found
