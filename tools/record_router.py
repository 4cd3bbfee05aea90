"""Record a routed host behind the REAL sglang-router, for the router view's snapshot tests.

    python -m tools.record_router tests/tui/data/router.jsonl

One simulated host with two servers behind `python -m sglang_router.launch_router` (started on
the host over SSH, as bench/router_restore.py does), plus a second router nobody listens for.
The console records while one worker is taken out through the router's own API (serving
nobody) and the other server is killed while the router still lists it (in router but down).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import tempfile
import time
from pathlib import Path

from bench.router_restore import routed_host, routers_yaml, start_router
from sglconsole import config
from sglconsole.remote.ssh.connection import SshFleet
from sglconsole.sim.fleet.scenarios import demo_profiles
from sglconsole.sim.fleet.start import SimFleet
from sglconsole.state.routing import Routing
from sglconsole.tui.app import ConsoleApp, make_app


def routing(app: ConsoleApp, port: int) -> Routing | None:
    server = app.session.fleet.server("r1", port)
    return server.view.routes[0].routing if server and server.view.routes else None


async def until(pilot, check, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        await pilot.pause(0.1)


async def record(config_path: Path, out: Path) -> None:
    cfg = config.load(config_path)
    ssh = SshFleet(cfg.hosts)
    try:
        router = await start_router(ssh, 2)
        app = make_app(cfg, record=out)
        async with app.run_test(size=(160, 48)) as pilot:
            both = lambda: routing(app, 30000) == routing(app, 30001) == Routing.SERVING  # noqa: E731
            await until(pilot, both, 40, "both servers in the router")
            await pilot.pause(2)
            await router.remove("http://127.0.0.1:30001")
            nobody = lambda: routing(app, 30001) == Routing.SERVING_NOBODY  # noqa: E731
            await until(pilot, nobody, 20, "serving nobody")
            pid = app.session.fleet.server("r1", 30000).process.main.pid
            await ssh["r1"].run(["kill", "-9", str(pid)])
            down = lambda: routing(app, 30000) == Routing.IN_ROUTER_DOWN  # noqa: E731
            await until(pilot, down, 20, "in router but down")
            await pilot.pause(3)
    finally:
        await ssh.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    mode = "sshd" if os.geteuid() == 0 and shutil.which("sshd") else "asyncssh"
    routers = routers_yaml(2)["routers"]
    routers["gone"] = {"url": "http://127.0.0.1:9", "servers": ["r1:30000"]}
    with tempfile.TemporaryDirectory() as folder:
        fleet = SimFleet(
            Path(folder),
            [routed_host(2)],
            demo_profiles(),
            ssh=mode,
            extra_config={"routers": routers},
        )
        fleet.start()
        try:
            fleet.wait_ready()
            asyncio.run(record(fleet.config_path, args.out))
        finally:
            fleet.stop()
    args.out.chmod(0o644)  # a test fixture: it holds no secret


if __name__ == "__main__":
    main()
