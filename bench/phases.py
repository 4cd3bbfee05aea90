"""The measured phases of bench/run.py and the benches built on it: a watcher (bench/worker.py)
in its own process, its CPU and the hosts' SSH side's, after a warm-up that is not counted."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from bench import checks
from bench.cpu import proc_stat
from sglconsole.sim.fleet.start import SimFleet

REPO = Path(__file__).resolve().parents[1]


def host_cpu(fleet: SimFleet) -> float:
    """CPU of every host's SSH side: its SSH daemon and everything under it (sessions, commands),
    alive or already reaped into a parent's counters. The simulated GPU servers are not included."""
    total = 0.0
    for host in fleet.hosts.values():
        pids = set(host.pids())
        table = {pid: proc_stat(pid) for pid in pids}
        daemons = [pid for pid in pids if b"sglconsole.sim.host.hostd" in _cmdline(pid)]
        keep = set(daemons)
        changed = True
        while changed:
            changed = False
            for pid, stat in table.items():
                if stat and pid not in keep and stat[0] in keep:
                    keep.add(pid)
                    changed = True
        total += sum(table[pid][1] for pid in keep if table.get(pid))
    return total


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


WARMUP_S = 10.0


def run_worker(
    mode: str,
    config: Path,
    seconds: float,
    rss_at: tuple[float, ...] = (),
    warmup: float = 0.0,
    extra: tuple[str, ...] = (),
) -> dict:
    command = [
        sys.executable,
        "-m",
        "bench.worker",
        mode,
        str(config),
        str(seconds + warmup),
        "--warmup",
        str(warmup),
        *extra,
    ]
    for mark in rss_at:
        command += ["--rss-at", str(mark)]
    out = _run_to_end(command, seconds + 300, mode)
    said = [line for line in out.stderr.splitlines() if line.startswith("FAILED: ")]
    if out.returncode != 0 and said:  # the worker could not measure, and says which: pass it on
        print("\n".join(said), file=sys.stderr, flush=True)
        raise SystemExit(1)
    if out.returncode != 0:  # it crashed (a hook renamed under it?): its stderr, then one line
        print(out.stderr[-3000:], file=sys.stderr, flush=True)
        last = (out.stderr.strip().splitlines() or [f"exit {out.returncode}"])[-1]
        checks.fail(f"bench/worker.py {mode}", "every measure it takes", f"crashed: {last}")
    return json.loads(out.stdout)


def _run_to_end(command: list[str], timeout: float, mode: str) -> subprocess.CompletedProcess:
    """The worker's run; one that has not ended TIMEOUT seconds after its start prints its
    threads' stacks (faulthandler, SIGUSR1), is killed, and the bench fails in one line."""
    worker = subprocess.Popen(
        command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        stdout, stderr = worker.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        worker.send_signal(signal.SIGUSR1)
        time.sleep(1)
        worker.kill()
        stderr = worker.communicate()[1]
        print(stderr[-6000:], file=sys.stderr, flush=True)
        checks.fail(
            f"bench/worker.py {mode}",
            "every measure it takes",
            f"it did not end {timeout:.0f} s after it started (its threads' stacks above)",
        )
    return subprocess.CompletedProcess(command, worker.returncode, stdout, stderr)


def measured(
    fleet: SimFleet,
    mode: str,
    config: Path,
    seconds: float,
    warmup: float = WARMUP_S,
    also: dict[str, Callable[[], float]] | None = None,
) -> dict:
    """Steady state: the first `warmup` seconds (imports, connecting, reading backlogs) are not
    counted, on the watcher's side or on the hosts' (a console runs for days; that is paid once).
    ALSO: more CPU counters (name -> a reading in CPU-s) read over the same counted window; each
    difference is in the result under its name."""
    readers = {"host": lambda: host_cpu(fleet), **(also or {})}
    start = {"host_total": host_cpu(fleet)}
    at_warmup: dict[str, float] = {}
    at_end: dict[str, float] = {}

    def read_all(into: dict) -> None:
        for name, read in readers.items():
            into.setdefault(name, read())

    # the hosts' side is read while the watcher is still connected: once it hangs up, its
    # sessions' children are reparented to init and their CPU leaves every counter we can see
    marks = [
        threading.Timer(warmup, read_all, args=(at_warmup,)),
        threading.Timer(warmup + seconds, read_all, args=(at_end,)),
    ]
    for timer in marks:
        # daemon: a SIGTERM mid-phase exits now, not once the timers fire (warmup + seconds)
        timer.daemon = True
        timer.start()
    result = run_worker(mode, config, seconds + 3, warmup=warmup)
    for timer in marks:
        timer.join()
    result["host_cpu_s"] = at_end["host"] - at_warmup["host"]
    result["host_cpu_total_s"] = at_end["host"] - start["host_total"]
    for name in also or {}:
        result[name] = at_end[name] - at_warmup[name]
    result["startup_note"] = f"first {warmup:g}s not counted"
    return result


def exit_on_signals() -> None:
    """SIGTERM (`timeout`, kill) and SIGHUP (a closed terminal) unwind like Ctrl-C: every `finally`
    runs, so the simulated fleet is stopped instead of left running."""
    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, lambda received, _frame: sys.exit(128 + received))
