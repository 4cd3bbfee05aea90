"""What `sglconsole exporter` costs per watched host, next to the console's monitor, in one run.

    python bench/exporter_cost.py [--hosts 64] [--servers 2] [--seconds 60] [--out FILE]

Starts the simulated fleet of bench/run.py (hosts x servers under load, real SSH), then for
--seconds each (after a warm-up that is not counted: imports, connecting, reading backlogs):
(a) `sglconsole exporter` as its own process, scraped every --scrape seconds as Prometheus would,
(b) the console's headless monitor (bench/worker.py), on the same fleet. Writes
exporter_cpu_per_host_minute (CPU-s of the exporter process per host-minute) and the details
under exporter_cost into --out (read, modify, write: the other keys stay).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import httpx  # noqa: E402

from bench import checks, worker  # noqa: E402
from bench.cpu import load, process_cpu_s  # noqa: E402
from bench.phases import exit_on_signals, run_worker  # noqa: E402
from bench.worker import die_with_parent  # noqa: E402
from sglconsole.sim.fleet.scenarios import bench_hosts, demo_profiles  # noqa: E402
from sglconsole.sim.fleet.start import SimFleet  # noqa: E402

TODAY = 0.25
"""The console's monitor, CPU-s per host-minute (bench/results.json phases.monitor, 16 hosts)."""
SCRIPT = "bench/exporter_cost.py"
PROMISES: checks.Promises = {
    # key written -> the count that proves it measured (bench.checks)
    "exporter_cpu_per_host_minute": "exporter_cost.exporter.scrapes",
    "exporter_cost.exporter.scrape_p50_s": "exporter_cost.exporter.scrapes",
    "exporter_cost.exporter.hosts_reachable_at_end": (
        "exporter_cost.exporter.hosts_reachable_at_end"
    ),
    "exporter_cost.monitor.cpu_s_per_host_minute": "exporter_cost.monitor.cpu_s",
    "exporter_cost.exporter_vs_monitor": "exporter_cost.monitor.cpu_s",
}
SMALLEST = {"hosts": 2, "servers": 1, "seconds": 5.0, "warmup": 6.0, "scrape": 1.0}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Scraper:
    """GET /metrics every `every` seconds, as Prometheus does; counts the hosts said reachable."""

    def __init__(self, url: str, every: float):
        self.url, self.every = url, every
        self.seconds: list[float] = []
        self.reachable = 0
        self.halt = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        with httpx.Client(timeout=10) as client:
            while not self.halt.wait(self.every):
                began = time.monotonic()
                try:
                    text = client.get(self.url).text
                except httpx.HTTPError:
                    continue
                self.seconds.append(time.monotonic() - began)
                self.reachable = sum(
                    1
                    for line in text.splitlines()
                    if line.startswith("sglconsole_host_reachable{") and line.endswith(" 1.0")
                )

    def stop(self) -> None:
        self.halt.set()
        self.thread.join(15)


def exporter(config: Path, seconds: float, warmup: float, scrape: float, log: Path) -> dict:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "sglconsole", "exporter", "-c", str(config)]
        + ["--listen", f"127.0.0.1:{port}"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=log.open("w"),
        preexec_fn=die_with_parent,
    )
    scraper = Scraper(f"http://127.0.0.1:{port}/metrics", scrape)
    try:
        time.sleep(warmup)
        began_cpu, began = process_cpu_s(process.pid), time.monotonic()
        time.sleep(seconds)
        cpu, took = process_cpu_s(process.pid), time.monotonic() - began
        if cpu is None or began_cpu is None or process.poll() is not None:
            raise RuntimeError(f"the exporter stopped:\n{log.read_text()[-3000:]}")
        total = cpu
    finally:
        scraper.stop()
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
    scrapes = sorted(scraper.seconds)
    return {
        "cpu_s": cpu - began_cpu,
        "cpu_total_s": total,
        "measured_s": took,
        "scrapes": len(scrapes),
        "scrape_p50_s": scrapes[len(scrapes) // 2] if scrapes else None,
        "hosts_reachable_at_end": scraper.reachable,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=64)
    parser.add_argument("--servers", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--warmup", type=float, default=20)
    parser.add_argument("--scrape", type=float, default=5, help="seconds between two scrapes")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results.json")
    args = checks.parse(parser, SMALLEST)
    checks.require_hooks(SCRIPT, worker.HOOKS["monitor"])
    workdir = Path(tempfile.mkdtemp(prefix="sglconsole-exporter-cost-"))
    ssh = "sshd" if os.geteuid() == 0 else "asyncssh"
    fleet = SimFleet(
        workdir / "fleet", bench_hosts(args.hosts, args.servers), demo_profiles(), ssh=ssh
    )
    print(f"starting {args.hosts} simulated hosts x {args.servers} servers ({ssh}) ...", flush=True)
    exit_on_signals()
    host_minutes = args.hosts * args.seconds / 60
    try:
        fleet.start(timeout=300)
        fleet.wait_ready(timeout=300)
        time.sleep(5)
        before = load()
        print(f"exporter: {args.seconds:g}s after {args.warmup:g}s warm-up ...", flush=True)
        found = exporter(fleet.config_path, args.seconds, args.warmup, args.scrape, workdir / "log")
        print(f"monitor: {args.seconds:g}s after {args.warmup:g}s warm-up ...", flush=True)
        monitor = run_worker("monitor", fleet.config_path, args.seconds, warmup=args.warmup)
    finally:
        fleet.stop()
    per_host = found["cpu_s"] / host_minutes
    monitor_per_host = monitor["cpu_s"] / host_minutes
    detail = {
        "hosts": args.hosts,
        "servers_per_host": args.servers,
        "seconds": args.seconds,
        "warmup_s": args.warmup,
        "scrape_interval_s": args.scrape,
        "exporter": {**found, "cpu_s_per_host_minute": per_host},
        "monitor": {"cpu_s": monitor["cpu_s"], "cpu_s_per_host_minute": monitor_per_host},
        "exporter_vs_monitor": checks.ratio(per_host, monitor_per_host),
        "bound_cpu_s_per_host_minute": TODAY,
        "machine_before": before,
        "machine_after": load(),
    }
    measured = {"exporter_cost": detail, "exporter_cpu_per_host_minute": per_host}
    checks.save(SCRIPT, args.out, measured, PROMISES)
    print(json.dumps(detail, indent=2))
    print(
        f"exporter {per_host:.3f} CPU-s per host-minute (monitor {monitor_per_host:.3f}, "
        f"bound {TODAY}): {'OK' if per_host < TODAY else 'ABOVE'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
