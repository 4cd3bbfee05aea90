"""What watching for the signs before an outage costs: the console's monitor and the hosts' side
with them (hosts.yaml's defaults: memory every 10 s, the kernel log followed, ECC every 60 s)
and without them (memory_interval 0, kernel_log false, gpu_health_interval 0), on one fleet.

    python bench/precursors_cost.py [--hosts 16] [--servers 4] [--seconds 60] [--out FILE]

Starts the simulated fleet of bench/run.py (hosts x servers under load, real SSH), then runs the
console's headless monitor (bench/worker.py) for --seconds after a warm-up that is not counted,
off, on, off, on (two rounds: the machine's load drifts), and writes precursors_cost (CPU-s per
host-minute of each, console and hosts' SSH side) and precursors_cpu_per_host_minute (the
console's extra, the median of the rounds) into --out (read, modify, write: the other keys stay).
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

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import checks, worker  # noqa: E402
from bench.cpu import load  # noqa: E402
from bench.phases import exit_on_signals, measured  # noqa: E402
from sglconsole.sim.fleet.scenarios import bench_hosts, demo_profiles  # noqa: E402
from sglconsole.sim.fleet.start import SimFleet  # noqa: E402

SCRIPT = "bench/precursors_cost.py"
OFF = {"memory_interval": 0, "kernel_log": False, "gpu_health_interval": 0}
PROMISES: checks.Promises = {
    # key written -> the count that proves it measured (bench.checks)
    "precursors_cpu_per_host_minute": "precursors_cost.rounds",
    "precursors_cost.on.cpu_s_per_host_minute": "precursors_cost.rounds",
    "precursors_cost.off.cpu_s_per_host_minute": "precursors_cost.rounds",
    "precursors_cost.on.host_cpu_s_per_host_minute": "precursors_cost.rounds",
    "precursors_cost.off.host_cpu_s_per_host_minute": "precursors_cost.rounds",
}
SMALLEST = {"hosts": 2, "servers": 1, "seconds": 5.0, "warmup": 6.0, "rounds": 1}


def without_signs(config: Path) -> Path:
    """A copy of the fleet's hosts.yaml with every sign turned off (under `defaults:`)."""
    document = yaml.safe_load(config.read_text())
    document["defaults"] = {**(document.get("defaults") or {}), **OFF}
    path = config.with_name("hosts-no-signs.yaml")
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=16)
    parser.add_argument("--servers", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--warmup", type=float, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results.json")
    args = checks.parse(parser, SMALLEST)
    checks.require_hooks(SCRIPT, worker.HOOKS["monitor"])
    workdir = Path(tempfile.mkdtemp(prefix="sglconsole-precursors-cost-"))
    ssh = "sshd" if os.geteuid() == 0 else "asyncssh"
    fleet = SimFleet(
        workdir / "fleet", bench_hosts(args.hosts, args.servers), demo_profiles(), ssh=ssh
    )
    print(f"starting {args.hosts} simulated hosts x {args.servers} servers ({ssh}) ...", flush=True)
    exit_on_signals()
    host_minutes = args.hosts * args.seconds / 60
    runs: dict[str, list[dict]] = {"off": [], "on": []}
    try:
        fleet.start(timeout=300)
        fleet.wait_ready(timeout=300)
        time.sleep(5)
        before = load()
        configs = {"off": without_signs(fleet.config_path), "on": fleet.config_path}
        for round_number in range(args.rounds):
            for name in ("off", "on"):
                print(f"round {round_number + 1}, signs {name}: {args.seconds:g}s ...", flush=True)
                found = measured(fleet, "monitor", configs[name], args.seconds, args.warmup)
                runs[name].append(found)
    finally:
        fleet.stop()

    def per_host_minute(name: str, key: str) -> float:
        return statistics.median(run[key] for run in runs[name]) / host_minutes

    detail = {
        "hosts": args.hosts,
        "servers_per_host": args.servers,
        "seconds": args.seconds,
        "warmup_s": args.warmup,
        "rounds": args.rounds,
        **{
            name: {
                "cpu_s": [run["cpu_s"] for run in runs[name]],
                "host_cpu_s": [run["host_cpu_s"] for run in runs[name]],
                "cpu_s_per_host_minute": per_host_minute(name, "cpu_s"),
                "host_cpu_s_per_host_minute": per_host_minute(name, "host_cpu_s"),
            }
            for name in runs
        },
        "machine_before": before,
        "machine_after": load(),
    }
    extra = detail["on"]["cpu_s_per_host_minute"] - detail["off"]["cpu_s_per_host_minute"]
    hosts_extra = (
        detail["on"]["host_cpu_s_per_host_minute"] - detail["off"]["host_cpu_s_per_host_minute"]
    )
    detail["hosts_extra_cpu_s_per_host_minute"] = hosts_extra
    measured_keys = {"precursors_cost": detail, "precursors_cpu_per_host_minute": extra}
    checks.save(SCRIPT, args.out, measured_keys, PROMISES)
    print(json.dumps(detail, indent=2))
    print(
        f"signs before an outage: console {extra:+.4f} CPU-s per host-minute "
        f"(off {detail['off']['cpu_s_per_host_minute']:.4f}, "
        f"on {detail['on']['cpu_s_per_host_minute']:.4f}); hosts' side {hosts_extra:+.4f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
