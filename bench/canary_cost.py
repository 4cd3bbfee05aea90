"""What the canary costs: its requests per server-hour, and the console's CPU for them.

    python bench/canary_cost.py [--hosts 16] [--servers 4] [--seconds 120] [--interval 10]

Starts the simulated fleet of bench/run.py (hosts x servers, real SSH), then runs
`sglconsole exporter` (the monitor without a screen, which runs the canary) twice on it for
--seconds each, after a warm-up that is not counted: once with the canary off (`canary:
{interval: 0}` on every profile), once with it every --interval seconds (shorter than the 300 s
default, so that a short run counts many): off, on, off, on (--rounds 2: a 2-core machine's load
drifts, and a busier machine costs every process more CPU-s for the same work). The difference of
the medians of the exporter's CPU, per canary run counted in its /status, scaled to the default
interval, is the canary's CPU per server-hour.
Writes canary_cost (details) into --out (read, modify, write: the other keys stay).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import httpx  # noqa: E402

from bench import checks  # noqa: E402
from bench.cpu import load, process_cpu_s  # noqa: E402
from bench.exporter_cost import free_port  # noqa: E402
from bench.phases import exit_on_signals  # noqa: E402
from bench.worker import die_with_parent  # noqa: E402
from sglconsole.config import Canary  # noqa: E402
from sglconsole.core.canary import PROMPTS  # noqa: E402
from sglconsole.sim.fleet.scenarios import bench_hosts, demo_profiles  # noqa: E402
from sglconsole.sim.fleet.start import SimFleet  # noqa: E402

SCRIPT = "bench/canary_cost.py"
DEFAULT_INTERVAL_S = Canary().interval
PROMISES: checks.Promises = {
    # key written -> the count that proves it measured (bench.checks)
    "canary_cost.requests_per_server_hour": "canary_cost.on.runs",
    "canary_cost.cpu_s_per_run": "canary_cost.on.runs",
    "canary_cost.cpu_s_per_server_hour": "canary_cost.on.runs",
    "canary_cost.off.cpu_s": None,
    "canary_cost.on.cpu_s": None,
}
SMALLEST = {"hosts": 2, "servers": 1, "seconds": 6.0, "warmup": 6.0, "interval": 2.0, "rounds": 1}


def with_canary(source: Path, target: Path, interval: float) -> Path:
    """hosts.yaml with every profile's canary every INTERVAL seconds (0: off)."""
    data = yaml.safe_load(source.read_text())
    for profile in (data.get("profiles") or {}).values():
        profile["canary"] = {"interval": interval}
    target.write_text(yaml.safe_dump(data, sort_keys=False))
    return target


def runs_in(status: dict) -> int:
    """Canary runs of the servers' current processes, as /status says (each ✓ or ✗ is one)."""
    return sum(
        len((server.get("canary") or {}).get("history") or "")
        for host in status["hosts"].values()
        for server in host["servers"]
    )


def exporter(config: Path, seconds: float, warmup: float, log: Path) -> dict:
    """The exporter's CPU over SECONDS after WARMUP, and its canary runs counted then."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "sglconsole", "exporter", "-c", str(config)]
        + ["--listen", f"127.0.0.1:{port}"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=log.open("w"),
        preexec_fn=die_with_parent,
    )
    url = f"http://127.0.0.1:{port}/status"
    try:
        time.sleep(warmup)
        before = runs_in(httpx.get(url, timeout=30).json())
        began_cpu, began = process_cpu_s(process.pid), time.monotonic()
        time.sleep(seconds)
        cpu, took = process_cpu_s(process.pid), time.monotonic() - began
        after = runs_in(httpx.get(url, timeout=30).json())
        if cpu is None or began_cpu is None or process.poll() is not None:
            raise RuntimeError(f"the exporter stopped:\n{log.read_text()[-3000:]}")
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
    return {"cpu_s": cpu - began_cpu, "measured_s": took, "runs": max(0, after - before)}


def median_of(runs: list[dict]) -> dict:
    """One figure per measure over the rounds: the median CPU-s, runs and seconds."""
    return {
        "cpu_s": statistics.median(run["cpu_s"] for run in runs),
        "measured_s": statistics.median(run["measured_s"] for run in runs),
        "runs": round(statistics.median(run["runs"] for run in runs)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=16)
    parser.add_argument("--servers", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--warmup", type=float, default=20)
    parser.add_argument("--interval", type=float, default=10, help="canary seconds while measured")
    parser.add_argument("--rounds", type=int, default=2, help="off then on, this many times")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results.json")
    args = checks.parse(parser, SMALLEST)
    workdir = Path(tempfile.mkdtemp(prefix="sglconsole-canary-cost-"))
    ssh = "sshd" if os.geteuid() == 0 else "asyncssh"
    fleet = SimFleet(
        workdir / "fleet", bench_hosts(args.hosts, args.servers), demo_profiles(), ssh=ssh
    )
    print(f"starting {args.hosts} simulated hosts x {args.servers} servers ({ssh}) ...", flush=True)
    exit_on_signals()
    try:
        fleet.start(timeout=300)
        fleet.wait_ready(timeout=300)
        time.sleep(3)
        before = load()
        configs = {
            "off": with_canary(fleet.config_path, workdir / "off.yaml", 0),
            "on": with_canary(fleet.config_path, workdir / "on.yaml", args.interval),
        }
        rounds: dict[str, list[dict]] = {"off": [], "on": []}
        for number in range(args.rounds):
            for name, config in configs.items():
                every = "off" if name == "off" else f"every {args.interval:g}s"
                print(f"round {number + 1}, canary {every}: {args.seconds:g}s ...", flush=True)
                found = exporter(config, args.seconds, args.warmup, workdir / f"{name}.log")
                rounds[name].append({**found, "machine": load()})
    finally:
        fleet.stop()
    off, on = (median_of(rounds[name]) for name in ("off", "on"))
    servers = args.hosts * args.servers
    per_run = checks.ratio(on["cpu_s"] - off["cpu_s"], on["runs"]) if on["runs"] else None
    runs_per_server_hour = 3600 / DEFAULT_INTERVAL_S
    detail = {
        "hosts": args.hosts,
        "servers_per_host": args.servers,
        "seconds": args.seconds,
        "warmup_s": args.warmup,
        "interval_measured_s": args.interval,
        "default_interval_s": DEFAULT_INTERVAL_S,
        "rounds": args.rounds,
        "off": off,
        "on": on,
        "each_round": rounds,
        "requests_per_server_hour": runs_per_server_hour * len(PROMPTS),
        "cpu_s_per_run": per_run,
        "cpu_s_per_server_hour": None if per_run is None else per_run * runs_per_server_hour,
        "servers": servers,
        "machine_before": before,
        "machine_after": load(),
    }
    checks.save(SCRIPT, args.out, {"canary_cost": detail}, PROMISES)
    print(json.dumps(detail, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
