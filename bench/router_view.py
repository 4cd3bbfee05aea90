"""How fast the console sees a server leave and rejoin its router, through the REAL SGLang router.

    python bench/router_view.py [--rounds 6] [--out bench/results.json]

One simulated host with two servers behind `python -m sglang_router.launch_router` (started over
SSH, as bench/router_restore.py does) and the console's monitor (FleetMonitor, with its router
feed). Each round takes r1:30001 out through the router's own API and times until the fleet
state says "serving nobody", then puts it back and times until it says "in router"; then times
single polls (GET /workers through the SSH port forward, and the views published again). Writes
router_view_nobody_s, router_view_back_s and router_view_poll_ms into --out (read, modify,
write: the other keys stay).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import checks  # noqa: E402
from bench.router_restore import (  # noqa: E402
    HOST,
    NO_ROUTER,
    routed_host,
    routers_yaml,
    start_router,
)
from sglconsole import config  # noqa: E402
from sglconsole.remote.monitor import FleetMonitor  # noqa: E402
from sglconsole.sim.fleet.scenarios import demo_profiles  # noqa: E402
from sglconsole.sim.fleet.start import SimFleet  # noqa: E402
from sglconsole.state.routing import Routing  # noqa: E402

URL = "http://127.0.0.1:30001"
SCRIPT = "bench/router_view.py"
PROMISES: checks.Promises = {
    # key written -> the count that proves it measured (bench.checks)
    "router_view_nobody_s": "router_view_detail.rounds",
    "router_view_back_s": "router_view_detail.rounds",
    "router_view_poll_ms": "router_view_detail.polls",
}
SMALLEST = {"rounds": 1}
HOOKS = (  # what the measure reads: the fleet state's routes, the router feed's poll
    "sglconsole.remote.monitor:FleetMonitor",
    "sglconsole.state.model:ServerView.routes",
    "sglconsole.remote.router.feed:RouterFeed.poll",
)


def routing(monitor: FleetMonitor) -> Routing | None:
    routes = monitor.state.server(HOST, 30001).view.routes
    return routes[0].routing if routes else None


async def seen(monitor: FleetMonitor, want: Routing, timeout: float = 30) -> float:
    started = time.monotonic()
    while routing(monitor) != want:
        if time.monotonic() - started > timeout:
            raise RuntimeError(f"the console did not see {want.value} in {timeout:g}s")
        await asyncio.sleep(0.01)
    return time.monotonic() - started


async def measure(config_path: Path, rounds: int) -> dict:
    async with FleetMonitor(config.load(config_path)) as monitor:
        router = await start_router(monitor.ssh, 2)
        await seen(monitor, Routing.SERVING, 60)
        out, back, polls = [], [], []
        for _ in range(rounds):
            await router.remove(URL)  # returns once the router no longer lists it
            out.append(await seen(monitor, Routing.SERVING_NOBODY))
            await router.add(URL)  # returns once the router lists it healthy
            back.append(await seen(monitor, Routing.SERVING))
        for _ in range(20):
            started = time.monotonic()
            await monitor.routers.poll("front")
            polls.append((time.monotonic() - started) * 1000)
    interval = monitor.routers.interval
    return {
        "router_view_nobody_s": round(statistics.median(out), 2),
        "router_view_back_s": round(statistics.median(back), 2),
        "router_view_poll_ms": round(statistics.median(polls), 1),
        "router_view_detail": {
            "rounds": len(out),
            "polls": len(polls),
            "poll_interval_s": interval,
            "nobody_max_s": round(max(out), 2),
            "back_max_s": round(max(back), 2),
            "poll_max_ms": round(max(polls), 1),
            "router": "sglang-router 0.3.2",
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results.json")
    args = checks.parse(parser, SMALLEST)
    checks.require_hooks(SCRIPT, HOOKS)
    if importlib.util.find_spec("sglang_router") is None:
        checks.fail(SCRIPT, "router_view_nobody_s", NO_ROUTER)
    with tempfile.TemporaryDirectory(prefix="sglc-router-view-") as workdir:
        fleet = SimFleet(
            Path(workdir) / "fleet", [routed_host(2)], demo_profiles(), extra_config=routers_yaml(2)
        )
        fleet.start()
        try:
            fleet.wait_ready()
            measured = asyncio.run(measure(fleet.config_path, args.rounds))
        finally:
            fleet.stop()
    checks.save(SCRIPT, args.out, measured, PROMISES)
    print(json.dumps(measured, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
