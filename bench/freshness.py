"""Freshness: a line appended to a host's log -> a record in the fleet state (the monitor), or ->
in the TUI's terminal output. Every marker line carries an id no other line of any run has (a
random run id and a sequence number, as its #token), so a line read twice or a previous run's
line in the backlog cannot be counted."""

from __future__ import annotations

import random
import secrets
import threading
import time
from pathlib import Path

import yaml

from bench.phases import run_worker
from sglconsole.sim.fleet.scenarios import FRESHNESS_PORT
from sglconsole.sim.fleet.start import SimFleet


class MarkerWriter:
    """Appends decode-format lines, each with an id of its own, to each host's idle log; notes
    when (before the write: the line cannot be read before it is noted)."""

    def __init__(self, fleet: SimFleet, hosts: list[str], rate_hz: float = 4.0):
        self.paths = {
            name: fleet.hosts[name].root / "logs" / f"sglang-{FRESHNESS_PORT}.log" for name in hosts
        }
        self.rate = rate_hz
        self.written: dict[str, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self, delay: float, seconds: float) -> None:
        self._delay = delay
        self._until = time.monotonic() + delay + seconds
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        if self._stop.wait(self._delay):
            return
        run = secrets.randbelow(9 * 10**8) + 10**8  # this writer's: no other run's line matches
        sequence = 0
        while not self._stop.is_set() and time.monotonic() < self._until:
            for name, path in self.paths.items():
                sequence += 1
                marker = run * 10**7 + sequence
                stamp = time.strftime("%Y-%m-%d %H:%M:%S")
                line = (
                    f"[{stamp}] Decode batch, #running-req: 1, #token: {marker}, "
                    "token usage: 0.01, cuda graph: True, gen throughput (token/s): 1.00, "
                    "#queue-req: 0\n"
                )
                self.written[f"{name}:{marker}"] = time.time()
                with open(path, "a") as log:
                    log.write(line)
            self._stop.wait(random.uniform(0.5, 1.5) / self.rate)


def freshness(
    fleet: SimFleet,
    config: Path,
    hosts: list[str],
    seconds: float,
    on_screen: bool = False,
    connect_s: float = 6.0,
) -> dict:
    """Append -> record in fleet state (the monitor), or append -> in the TUI's terminal output, for
    the one server shown (the TUI, with every host's markers still arriving). Only this run's
    markers count, each once: n is how many arrived, lost how many did not. The first marker
    is written `connect_s` after the watcher starts (the TUI: 2 s more), once it has connected
    and read the backlogs; the watcher stops 2 s after the last."""
    delay = connect_s + 2 if on_screen else connect_s
    writer = MarkerWriter(fleet, hosts)
    writer.start(delay=delay, seconds=seconds)
    if on_screen:
        extra = ("--select", hosts[0])
        result = run_worker("tui-screen", config, seconds + delay + 2, extra=extra)
    else:
        result = run_worker("monitor", config, seconds + delay + 2)
    writer.stop()
    written = {
        marker: written_at
        for marker, written_at in writer.written.items()
        if not on_screen or marker.startswith(f"{hosts[0]}:")
    }
    latencies = sorted(
        (result["arrivals"][marker] - written_at) * 1000
        for marker, written_at in written.items()
        if marker in result["arrivals"]
    )
    lost = len(written) - len(latencies)

    def pick(quantile: float) -> float | None:
        if not latencies:
            return None  # n 0: bench.checks fails the bench, this is never written
        return latencies[min(len(latencies) - 1, int(quantile * len(latencies)))]

    return {
        "n": len(latencies),
        "lost": lost,
        "p50_ms": pick(0.5),
        "p95_ms": pick(0.95),
        "max_ms": pick(1.0),
    }


def subset(config: Path, hosts: list[str], out: Path) -> Path:
    data = yaml.safe_load(config.read_text())
    data["hosts"] = {name: host for name, host in data["hosts"].items() if name in hosts}
    out.write_text(yaml.safe_dump(data, sort_keys=False))
    return out
