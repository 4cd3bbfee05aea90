"""What watching a host's containers costs the host: the container agent following Docker's event
stream (the default) against polling `docker ps` every 5 s (SGLCONSOLE_CONTAINER_POLL), on hosts
whose SGLang server runs in a real Docker container (Debian's docker.io, a dockerd per host).

    python bench/containers_cost.py [--hosts 1] [--seconds 60] [--out FILE]

Starts the simulated hosts (real sshd), then runs the console's headless monitor (bench/worker.py)
for --seconds after a warm-up that is not counted, poll, events, poll, events (two rounds: the
machine's load drifts), and writes containers_cost (CPU-s per host-minute of each: the hosts' SSH
side, which holds the agent and every CLI it starts; the engine's daemons, dockerd and containerd,
which answer each call; the console) and containers_events_saving_cpu_per_host_minute (the hosts'
side and daemons, poll minus events, the median of the rounds) into --out (read, modify, write).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import checks, worker  # noqa: E402
from bench.cpu import load, proc_stat  # noqa: E402
from bench.phases import _cmdline, exit_on_signals, measured  # noqa: E402
from sglconsole.remote.feeds.containers import POLL_ENV  # noqa: E402
from sglconsole.sim.fleet import engines  # noqa: E402
from sglconsole.sim.fleet.scenarios import container_host, demo_profiles  # noqa: E402
from sglconsole.sim.fleet.start import SimFleet  # noqa: E402

SCRIPT = "bench/containers_cost.py"
MODES = ("poll", "events")
PROMISES: checks.Promises = {
    # key written -> the count that proves it measured (bench.checks)
    "containers_events_saving_cpu_per_host_minute": "containers_cost.rounds",
    **{
        f"containers_cost.{mode}.{key}": "containers_cost.rounds"
        for mode in MODES
        for key in (
            "host_cpu_s_per_host_minute",
            "daemon_cpu_s_per_host_minute",
            "cpu_s_per_host_minute",
        )
    },
}
SMALLEST = {"hosts": 1, "seconds": 6.0, "warmup": 8.0, "rounds": 1}


def daemon_cpu(fleet: SimFleet) -> float:
    """CPU of every host's engine daemon and what it started (dockerd, containerd), not the
    containers' shims and what runs in them (the simulated servers)."""
    total = 0.0
    for engine in fleet.engines.values():
        if engine.daemon is None:
            continue
        keep, table = {engine.daemon.pid}, {}
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                table[int(entry.name)] = proc_stat(int(entry.name))
        changed = True
        while changed:
            changed = False
            for pid, stat in table.items():
                shim = stat and b"containerd-shim" in _cmdline(pid)  # a container's, not the daemon
                if stat and pid not in keep and stat[0] in keep and not shim:
                    keep.add(pid)
                    changed = True
        total += sum(table[pid][1] for pid in keep if table.get(pid))
    return total


def one_phase(fleet: SimFleet, mode: str, seconds: float, warmup: float) -> dict:
    """The monitor for warmup + seconds, the agent following events or polling `ps`; the daemons'
    CPU over the same counted window."""
    if mode == "poll":
        os.environ[POLL_ENV] = "1"  # the worker's monitor inherits it
    else:
        os.environ.pop(POLL_ENV, None)
    try:
        return measured(
            fleet,
            "monitor",
            fleet.config_path,
            seconds,
            warmup,
            also={"daemon_cpu_s": lambda: daemon_cpu(fleet)},
        )
    finally:
        os.environ.pop(POLL_ENV, None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--warmup", type=float, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results.json")
    args = checks.parse(parser, SMALLEST)
    checks.require_hooks(SCRIPT, worker.HOOKS["monitor"])
    reason = engines.unavailable(engines.DOCKER)
    if reason:
        checks.fail(SCRIPT, "containers_cost", f"no Docker here: {reason}")
    workdir = Path(tempfile.mkdtemp(prefix="sglconsole-containers-cost-"))
    hosts = [container_host(engines.DOCKER, name=f"gpu-docker-{n}") for n in range(args.hosts)]
    fleet = SimFleet(workdir / "fleet", hosts, demo_profiles(), ssh="sshd")
    print(f"starting {args.hosts} simulated hosts with Docker (sshd) ...", flush=True)
    exit_on_signals()
    host_minutes = args.hosts * args.seconds / 60
    runs: dict[str, list[dict]] = {mode: [] for mode in MODES}
    try:
        fleet.start(timeout=300)
        if fleet.notes:
            checks.fail(SCRIPT, "containers_cost", fleet.notes[0])
        fleet.wait_ready(timeout=300)
        time.sleep(3)
        before = load()
        for round_number in range(args.rounds):
            for mode in MODES:
                print(f"round {round_number + 1}, {mode}: {args.seconds:g}s ...", flush=True)
                runs[mode].append(one_phase(fleet, mode, args.seconds, args.warmup))
    finally:
        fleet.stop()

    def per_host_minute(mode: str, key: str) -> float:
        return statistics.median(run[key] for run in runs[mode]) / host_minutes

    keys = ("host_cpu_s", "daemon_cpu_s", "cpu_s")
    detail = {
        "hosts": args.hosts,
        "engine": "docker",
        "poll_interval_s": 5.0,
        "seconds": args.seconds,
        "warmup_s": args.warmup,
        "rounds": args.rounds,
        **{
            mode: {
                **{key: [run[key] for run in runs[mode]] for key in keys},
                **{f"{key}_per_host_minute": per_host_minute(mode, key) for key in keys},
            }
            for mode in MODES
        },
        "machine_before": before,
        "machine_after": load(),
    }

    def hosts_side(mode: str) -> float:
        found = detail[mode]
        return found["host_cpu_s_per_host_minute"] + found["daemon_cpu_s_per_host_minute"]

    saving = hosts_side("poll") - hosts_side("events")
    measured_keys = {
        "containers_cost": detail,
        "containers_events_saving_cpu_per_host_minute": saving,
    }
    checks.save(SCRIPT, args.out, measured_keys, PROMISES)
    print(json.dumps(detail, indent=2))
    print(
        f"watching containers, per host-minute: hosts' side + daemons {hosts_side('events'):.4f} "
        f"CPU-s with events vs {hosts_side('poll'):.4f} polling `ps` (saves {saving:+.4f}); "
        f"console {detail['events']['cpu_s_per_host_minute']:.4f} vs "
        f"{detail['poll']['cpu_s_per_host_minute']:.4f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
