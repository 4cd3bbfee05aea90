"""One measured watcher of the fleet, in its own process (so its CPU and memory are its own).

    python -m bench.worker monitor|prom|tui|tui-screen|naive CONFIG SECONDS [--rss-at S]
                           [--select HOST]

Prints one JSON object: CPU seconds (self + reaped children), RSS samples, for `monitor` the
arrival time of every freshness marker line it saw (for `tui-screen`: on screen), for `prom` when
each new number of running requests was first in a server's view.
"""

from __future__ import annotations

import argparse
import asyncio
import faulthandler
import json
import os
import re
import signal
import sys
import time

from bench import checks
from bench.cpu import own_cpu_s
from sglconsole.sim.fleet.scenarios import FRESHNESS_PORT  # the idle server whose log gets markers

MARKER = re.compile(r"#token: (\d+)")

HOOKS = {
    # what each mode's measure hooks onto: checked before measuring (bench.checks)
    "monitor": (
        "sglconsole.state.fleet:FleetState.subscribe",
        "sglconsole.state.fleet:FleetState.server",
        "sglconsole.state.model:ServerState.log_lines",
    ),
    "prom": (
        "sglconsole.state.fleet:FleetState.subscribe",
        "sglconsole.state.model:ServerState.view",
        "sglconsole.state.model:ServerView.load",
    ),
    "tui-screen": (
        "sglconsole.tui.app:make_app",
        "sglconsole.tui.widgets.fleet_tree:FleetTree.node_for",
        "sglconsole.tui.widgets.fleet_tree:FleetTree.select",
        # Textual has no public tap on what a headless app draws: its private one, checked here
        "textual.app:App._display",
        "textual._compositor:CompositorUpdate.render_segments",
    ),
}


def rss_kib() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


async def sample_rss(rss: dict, at: list[float], started: float) -> None:
    for mark in sorted(at):
        await asyncio.sleep(max(0.0, started + mark - time.monotonic()))
        rss[str(mark)] = rss_kib()


async def monitor(config, seconds: float, arrivals: dict) -> None:
    """When each marker line is first in the fleet state: the public subscription every view uses
    (FleetState.subscribe), and the server's log tail as the views read it (ServerState.log_lines).
    A marker counts once, the first time (a line read again after a reconnect is no news)."""
    from sglconsole.remote.monitor import FleetMonitor

    async with FleetMonitor(config) as fleet_monitor:
        fleet = fleet_monitor.state

        def on_change(host: str, port: int | None) -> None:
            if port not in (FRESHNESS_PORT, None):
                return
            server = fleet.server(host, FRESHNESS_PORT)
            if server is None:
                return
            now = time.time()
            for line in server.log_lines:
                found = MARKER.search(line)
                if found is not None:
                    arrivals.setdefault(f"{host}:{found[1]}", now)

        fleet.subscribe(on_change)
        await asyncio.sleep(seconds)


async def prom(config, seconds: float, arrivals: dict) -> None:
    """The monitor reading hosts.yaml's `source:` (Prometheus): when each new number of running
    requests is first in a server's view (what every view and `status --json` render)."""
    from sglconsole.remote.monitor import FleetMonitor

    async with FleetMonitor(config) as fleet_monitor:
        fleet, shown = fleet_monitor.state, {}

        def on_change(host: str, port: int | None) -> None:
            servers = fleet.hosts[host].servers  # port None: every server of the host changed
            for at in servers if port is None else (port,):
                server = servers.get(at)
                load = server.view.load if server is not None else None
                running = load.running_req if load is not None else None
                if running is not None and shown.get((host, at)) != running:
                    shown[(host, at)] = running
                    arrivals.setdefault(f"{host}|{at}|{running}", time.time())

        fleet.subscribe(on_change)
        await asyncio.sleep(seconds)


async def tui(config, seconds: float) -> None:
    from sglconsole.tui.app import make_app

    app = make_app(config)
    async with app.run_test(headless=True, size=(160, 48)):
        await asyncio.sleep(seconds)


async def tui_screen(config, seconds: float, arrivals: dict, host: str) -> None:
    """The TUI with the freshness server of `host` selected, its log raw: when each marker line is
    first in the terminal output the app produced (headless: rendered the same, not written)."""
    from textual._compositor import CompositorUpdate

    from sglconsole.tui.app import make_app

    app = make_app(config)
    display = app._display
    strip_ansi = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

    def seen_on_screen(screen, renderable) -> None:
        display(screen, renderable)
        if isinstance(renderable, CompositorUpdate):
            now = time.time()
            for token in MARKER.findall(
                strip_ansi.sub("", renderable.render_segments(app.console))
            ):
                arrivals.setdefault(f"{host}:{token}", now)

    app._display = seen_on_screen
    async with app.run_test(headless=True, size=(200, 50)) as pilot:
        deadline = time.monotonic() + 30
        while (
            app.main.tree.node_for((host, FRESHNESS_PORT)) is None and time.monotonic() < deadline
        ):
            await pilot.pause(0.1)
        app.main.tree.select((host, FRESHNESS_PORT))
        await pilot.press("l")
        await pilot.press("v")  # raw lines: the marker is the line's #token value
        await asyncio.sleep(seconds)


async def naive(config, seconds: float) -> None:
    """What scripts and gpustat-web-style tools do: every second, for every host, a new ssh exec
    per query."""
    from sglconsole.core.nvidia_smi import GPU_QUERY_FIELDS, gpu_query_args

    async def ssh(host, *argv: str) -> None:
        command = [
            "ssh",
            "-q",
            "-o",
            "BatchMode=yes",
            "-o",
            f"UserKnownHostsFile={host.known_hosts}",
            "-o",
            "StrictHostKeyChecking=yes",
            "-i",
            host.identity_file,
            "-p",
            str(host.port),
            f"{host.user}@{host.address}",
            *argv,
        ]
        proc = await asyncio.create_subprocess_exec(
            *command, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
        )
        await proc.wait()

    async def poll(host) -> None:
        logs = [s.log for s in host.servers if s.log and s.port != FRESHNESS_PORT]
        await asyncio.gather(
            ssh(host, "nvidia-smi", *gpu_query_args(GPU_QUERY_FIELDS)),
            ssh(host, "tail", "-n", "50", *logs),
        )

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        tick = time.monotonic()
        await asyncio.gather(*(poll(h) for h in config.hosts.values() if h.servers))
        await asyncio.sleep(max(0.0, 1.0 - (time.monotonic() - tick)))


def die_with_parent() -> None:
    """bench/run.py stopped by a signal at the wrong moment (while it forks us) must not leave us
    measuring on: the kernel signals us when the parent goes (Linux)."""
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent was gone before we asked
        sys.exit(0)


def main() -> None:
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # a hung run shows where (phases)
    die_with_parent()
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("monitor", "prom", "tui", "tui-screen", "naive"))
    parser.add_argument(
        "--select", default=None, help="tui-screen: the host whose freshness server is shown"
    )
    parser.add_argument("config")
    parser.add_argument("seconds", type=float)
    parser.add_argument("--rss-at", type=float, action="append", default=[])
    parser.add_argument(
        "--warmup",
        type=float,
        default=0.0,
        help="seconds not counted (imports, connects, backlogs)",
    )
    args = parser.parse_args()
    checks.require_hooks(f"bench/worker.py {args.mode}", HOOKS.get(args.mode, ()))
    from sglconsole import config

    cfg = config.load(args.config)
    arrivals: dict = {}
    rss: dict = {}

    marks: dict = {}

    async def warmed(started: float) -> None:
        await asyncio.sleep(max(0.0, started + args.warmup - time.monotonic()))
        marks["cpu"], marks["time"] = own_cpu_s(), time.monotonic()

    async def run() -> None:
        started = time.monotonic()
        sampler = asyncio.create_task(sample_rss(rss, args.rss_at, started))
        warm = asyncio.create_task(warmed(started))
        if args.mode == "monitor":
            await monitor(cfg, args.seconds, arrivals)
        elif args.mode == "prom":
            await prom(cfg, args.seconds, arrivals)
        elif args.mode == "tui":
            await tui(cfg, args.seconds)
        elif args.mode == "tui-screen":
            await tui_screen(cfg, args.seconds, arrivals, args.select or next(iter(cfg.hosts)))
        else:
            await naive(cfg, args.seconds)
        sampler.cancel()
        warm.cancel()

    asyncio.run(run())
    ended = time.monotonic()
    json.dump(
        {
            "cpu_s": own_cpu_s() - marks.get("cpu", 0.0),
            "cpu_total_s": own_cpu_s(),
            "measured_s": ended - marks.get("time", ended),
            "rss_kib": rss,
            "rss_end_kib": rss_kib(),
            "arrivals": arrivals,
            "pid": os.getpid(),
            "ended_wall": time.time(),  # when it stopped watching: freshness past it is unknown
        },
        sys.stdout,
    )


if __name__ == "__main__":
    main()
