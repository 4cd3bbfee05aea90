"""Restore's overhead beyond the server's own time, as bench/run.py measures it (also alone:
`bench/run.py --only-restore`)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from sglconsole.sim.fleet.scenarios import demo_hosts, demo_profiles
from sglconsole.sim.fleet.start import SimFleet

REPO = Path(__file__).resolve().parents[1]


class LogTimes:
    """Watches a log from outside the host: when the new server started writing, and when it
    was ready."""

    def __init__(self, log: Path):
        self.log, self.offset = log, log.stat().st_size
        self.launched = self.ready = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.005):
            text = self.log.read_text(errors="replace")[self.offset :]
            if self.launched is None and "server_args=" in text:
                self.launched = time.monotonic()
            if self.ready is None and "The server is fired up and ready to roll!" in text:
                self.ready = time.monotonic()

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.ready - self.launched if self.ready and self.launched else 0.0


def server_seconds(startup: float, stages: dict) -> float:
    """The server's own time in a restore: startup, shutdown, /health_generate's 1 s poll, the
    probe's generations."""
    return startup + sum(
        stages.get(name, 0.0) for name in ("stop", "generate", "answer", "throughput")
    )


async def restore_in_console(config_path: Path, log: Path, state: Path) -> dict:
    """As the console does it: the SSH connection is already up when the operator presses R."""
    from sglconsole import config as config_module
    from sglconsole.actions import ActionContext, restore
    from sglconsole.actions.audit import AuditLog, RollbackStore
    from sglconsole.remote.ssh.connection import SshFleet

    cfg = config_module.load(config_path)
    fleet = SshFleet(cfg.hosts)
    try:
        await fleet["ct129"].connect()
        times = LogTimes(log)
        started = time.monotonic()
        result = await restore(
            ActionContext(cfg, fleet),
            "ct129",
            30000,
            audit=AuditLog(state / "a.jsonl"),
            rollbacks=RollbackStore(state / "rb"),
        )
        total = time.monotonic() - started
        startup = times.stop()
    finally:
        await fleet.close()
    stages = {s.name: s.duration or 0.0 for s in result.stages}
    server = server_seconds(startup, stages)
    return {
        "ok": result.ok,
        "total_s": total,
        "server_startup_s": startup,
        "server_s": server,
        "overhead_s": total - server,
        "stages": stages,
    }


def restore_via_cli(config_path: Path, log: Path, state: Path) -> dict:
    times = LogTimes(log)
    started = time.monotonic()
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "sglconsole",
            "restore",
            "-c",
            str(config_path),
            "ct129:30000",
            "--yes",
            "--json",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "XDG_STATE_HOME": str(state)},
    )
    total = time.monotonic() - started
    startup = times.stop()
    stages = {s["name"]: s["duration_s"] or 0.0 for s in json.loads(out.stdout).get("stages", [])}
    return {"total_s": total, "overhead_s": total - server_seconds(startup, stages)}


def restore_overhead(
    workdir: Path, real_parser_s: float | None, runs: int, settle_s: float
) -> dict:
    """Wall time of `restore` minus the server's own time (its startup from exec to the ready
    line, watched from outside the host; its shutdown; /health_generate's poll; the probe's
    generations). In the console and via the CLI, RUNS times each: the run of median overhead,
    with every run's overhead beside it."""
    hosts = [h for h in demo_hosts(startup_s=3.0) if h.name == "ct129"]
    fleet = SimFleet(
        workdir / "restore", hosts, demo_profiles(), ssh="sshd" if os.geteuid() == 0 else "asyncssh"
    )
    try:
        fleet.start()
        fleet.wait_ready()
        time.sleep(settle_s)
        log = fleet.hosts["ct129"].root / "logs" / "sglang-30000.log"
        state = workdir / "state"
        console = median_run(
            [asyncio.run(restore_in_console(fleet.config_path, log, state)) for _ in range(runs)]
        )
        cli = median_run([restore_via_cli(fleet.config_path, log, state) for _ in range(runs)])
        real_parser = with_real_parser_cost(
            fleet, log, workdir / "state-real-parser", real_parser_s or REAL_PARSER_S
        )
    finally:
        fleet.stop()
    return {**console, "cli": cli, "real_parser": real_parser}


def median_run(runs: list[dict]) -> dict:
    ranked = sorted(runs, key=lambda run: run["overhead_s"])
    return {
        **ranked[(len(ranked) - 1) // 2],
        "runs_overhead_s": [run["overhead_s"] for run in runs],
        "runs_ok": [run.get("ok") for run in runs],
    }


REAL_PARSER_S = 11.8
"""What importing SGLang and torch to ask the host's parser took on a real H200 host."""


def with_real_parser_cost(
    fleet: SimFleet, log: Path, state: Path, parser_s: float = REAL_PARSER_S
) -> dict:
    """Restore twice on a host whose parser costs what a real one does: the first pays it (its
    preflight asks the host's SGLang), the second is answered from the parser cache."""
    [server_args] = (fleet.hosts["ct129"].root / "env").rglob("sglang/srt/server_args.py")
    server_args.write_text(f"import time\ntime.sleep({parser_s})\n" + server_args.read_text())
    previous = os.environ.get("XDG_STATE_HOME")
    os.environ["XDG_STATE_HOME"] = str(state)  # a cold parser cache
    try:
        cold = asyncio.run(restore_in_console(fleet.config_path, log, state))
        warm = asyncio.run(restore_in_console(fleet.config_path, log, state))
    finally:
        if previous is None:
            os.environ.pop("XDG_STATE_HOME", None)
        else:
            os.environ["XDG_STATE_HOME"] = previous
    return {
        "parser_s": parser_s,
        "cold_overhead_s": cold["overhead_s"],
        "warm_overhead_s": warm["overhead_s"],
        "cold_ok": cold["ok"],
        "warm_ok": warm["ok"],
    }


# --------------------------------------------------------------------- main


def record_restore(results: dict, restore: dict) -> None:
    results["restore"] = restore
    results["restore_overhead_s"] = restore["overhead_s"]
    # plus starting Python and connecting
    results["restore_overhead_cli_s"] = restore["cli"]["overhead_s"]
    results["restore_overhead_real_parser_cold_s"] = restore["real_parser"]["cold_overhead_s"]
    results["restore_overhead_real_parser_warm_s"] = restore["real_parser"]["warm_overhead_s"]
