"""Alerts on the canary's findings: wrong, looping, silent or changed answers (state.canary).

Not a status of the server (a server can be UP and answer wrong), so they are watched apart from
the status tracker, like a server's place in its router (alerts.routes). Hysteresis in runs, not
seconds: a finding is news once FAIL_RUNS runs of one process in a row failed (one slow answer
under a burst is no outage), and its end once RECOVER_RUNS runs in a row passed; a finding
alerted is told once, however long it lasts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sglconsole.state.fleet import FleetState

FAIL_RUNS = 2
RECOVER_RUNS = 2


@dataclass
class CanaryWatch:
    fail_runs: int = FAIL_RUNS
    recover_runs: int = RECOVER_RUNS
    told: dict[tuple[str, int], str] = field(default_factory=dict)
    """(host, port) -> the verdict alerted and not yet over."""


def passing_streak(runs, pid: int | None) -> int:
    count = 0
    for run in reversed(runs):
        if run.pid != pid or not run.ok:
            break
        count += 1
    return count


def canary_news(fleet: FleetState, watch: CanaryWatch, make_alert) -> list:
    """Alerts (built by `make_alert(host, server, verdict, reason)`) for findings that held
    `fail_runs` runs, and for the end of each one alerted."""
    found = []
    for host in fleet.hosts.values():
        for server in host.servers.values():
            key = (host.name, server.port)
            pid = server.view.pid
            run = server.canary.current(pid)
            told = watch.told.get(key)
            if run is None:
                continue
            failing = server.canary.failing_streak(pid) >= watch.fail_runs
            word = run.verdict if run.verdict != "OK" else "CHANGED"
            if failing and not run.ok and told is None:
                watch.told[key] = word
                found.append(make_alert(host, server, word, run.finding or word))
            elif told is not None and passing_streak(server.canary.runs, pid) >= watch.recover_runs:
                del watch.told[key]
                found.append(make_alert(host, server, "OK", "the canary's answers are right again"))
    return found
