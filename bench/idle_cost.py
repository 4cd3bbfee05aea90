"""What the console costs while nobody touches it: the TUI (with --record) next to the bare monitor
on the same 3-host demo fleet, with idle servers and with the demo's load, in one run.

    python bench/idle_cost.py [--seconds 60] [--settle 20] [--smallest] [--out FILE]
    # updates the idle_* and loaded_* keys of bench/results.json

Headless (Textual's test driver): a real terminal adds its own drawing cost on top.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import checks  # noqa: E402
from bench.cpu import own_cpu_s  # noqa: E402
from sglconsole import config  # noqa: E402
from sglconsole.remote.monitor import FleetMonitor  # noqa: E402
from sglconsole.sim.fleet.scenarios import demo_hosts, demo_profiles  # noqa: E402
from sglconsole.sim.fleet.start import SimFleet  # noqa: E402
from sglconsole.tui.app import make_app  # noqa: E402

SETTLE_S = 20.0
SCRIPT = "bench/idle_cost.py"
PROMISES: checks.Promises = {
    # key written -> the count that proves it measured (bench.checks)
    "idle_tui_cpu_pct": "idle_cost.tui.cpu_pct",
    "idle_record_mb_per_hour": None,  # 0 is a figure: nothing changed, nothing recorded
    "idle_cost.monitor.cpu_pct": "idle_cost.monitor.cpu_pct",
    "idle_cost.tui_vs_monitor": "idle_cost.monitor.cpu_pct",
    "loaded_cost.tui.cpu_pct": "loaded_cost.tui.cpu_pct",
    "loaded_cost.tui_vs_monitor": "loaded_cost.monitor.cpu_pct",
}
SMALLEST = {"seconds": 3.0, "settle": 5.0}
HOOKS = ("sglconsole.tui.app:make_app", "sglconsole.remote.monitor:FleetMonitor")


async def tui(cfg: config.Config, seconds: float, record: Path, settle: float) -> dict:
    app = make_app(cfg, record=record)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(settle)
        began_cpu, began, size = own_cpu_s(children=False), time.monotonic(), record.stat().st_size
        await pilot.pause(seconds)
        took = time.monotonic() - began
        return {
            "cpu_pct": (own_cpu_s(children=False) - began_cpu) / took * 100,
            "record_mb_per_hour": (record.stat().st_size - size) / took * 3600 / 1e6,
        }


async def monitor(cfg: config.Config, seconds: float, settle: float) -> dict:
    async with FleetMonitor(cfg):
        await asyncio.sleep(settle)
        began_cpu, began = own_cpu_s(children=False), time.monotonic()
        await asyncio.sleep(seconds)
        took = time.monotonic() - began
        return {"cpu_pct": (own_cpu_s(children=False) - began_cpu) / took * 100}


def measure(idle: bool, seconds: float, settle: float = SETTLE_S) -> dict:
    hosts = demo_hosts(startup_s=1.0)
    if idle:
        for host in hosts:
            host.sglang["load"] = {"concurrency": 0, "max_tokens": 1}
    workdir = Path(tempfile.mkdtemp(prefix="sglconsole-idle-"))
    fleet = SimFleet(workdir, hosts, demo_profiles(), ssh="auto")
    try:
        cfg = config.load(fleet.start())
        bare = asyncio.run(monitor(cfg, seconds, settle))
        with_ui = asyncio.run(tui(cfg, seconds, workdir / "record.jsonl", settle))
    finally:
        fleet.stop()
    ratio = checks.ratio(with_ui["cpu_pct"], bare["cpu_pct"])
    return {"monitor": bare, "tui": with_ui, "tui_vs_monitor": ratio}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--settle", type=float, default=SETTLE_S, help="seconds not counted")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results.json")
    args = checks.parse(parser, SMALLEST)
    checks.require_hooks(SCRIPT, HOOKS)
    os.environ.setdefault("XDG_STATE_HOME", tempfile.mkdtemp(prefix="sglconsole-state-"))
    results: dict = {}
    for name, idle in (("idle", True), ("loaded", False)):
        found = measure(idle, args.seconds, args.settle)
        results[f"{name}_cost"] = found
        print(f"{name}: {json.dumps(found)}", flush=True)
    results["idle_tui_cpu_pct"] = results["idle_cost"]["tui"]["cpu_pct"]
    results["idle_record_mb_per_hour"] = results["idle_cost"]["tui"]["record_mb_per_hour"]
    checks.save(SCRIPT, args.out, results, PROMISES)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
