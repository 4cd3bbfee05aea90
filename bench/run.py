"""sglconsole's cost and latency at fleet scale, against the naive way, in one run on this machine.

    python bench/run.py [--hosts 16] [--servers 4] [--seconds 60] [--rss-minutes 10]
                        [--out bench/results.json] [--only-cold-start | --only-restore]

Starts a simulated fleet (hosts x servers, each server under load, logging a decode line about
once a second), then watches it for --seconds each with (a) sglconsole's monitor, headless,
(b) the TUI, headless, and (c) the naive baseline: every second, for every host, a new
`ssh host nvidia-smi --query-gpu=...` and `ssh host tail -n 50 LOGS`. Reports CPU per
host-minute of the watcher and of the hosts' side (sshd and everything it spawned), the
freshness of log lines (append on a host -> record in fleet state), cold start with one host
that hangs, the parser against SGLang's regex, restore's overhead beyond the server's own
startup, and the monitor's memory growth. Writes bench/results.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import yaml  # noqa: E402

from bench import results_file  # noqa: E402
from bench.cpu import proc_stat  # noqa: E402
from sglconsole.sim.fleet.scenarios import FRESHNESS_PORT, bench_hosts, demo_hosts, demo_profiles  # noqa: E402
from sglconsole.sim.fleet.start import SimFleet  # noqa: E402


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


# ------------------------------------------------------------------- phases


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
    out = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=seconds + 300)
    if out.returncode != 0:
        raise RuntimeError(f"{mode} worker failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout)


def measured(fleet: SimFleet, mode: str, config: Path, seconds: float) -> dict:
    """Steady state: the first WARMUP_S (imports, connecting, reading backlogs) is not counted,
    on the watcher's side or on the hosts' (a console runs for days; that cost is paid once)."""
    holder: dict = {"start": host_cpu(fleet)}
    # the hosts' side is read while the watcher is still connected: once it hangs up, its
    # sessions' children are reparented to init and their CPU leaves every counter we can see
    marks = [
        threading.Timer(WARMUP_S, lambda: holder.setdefault("host", host_cpu(fleet))),
        threading.Timer(WARMUP_S + seconds, lambda: holder.setdefault("end", host_cpu(fleet))),
    ]
    for timer in marks:
        # daemon: a SIGTERM mid-phase exits now, not once the timers fire (WARMUP_S + seconds)
        timer.daemon = True
        timer.start()
    result = run_worker(mode, config, seconds + 3, warmup=WARMUP_S)
    for timer in marks:
        timer.join()
    result["host_cpu_s"] = holder["end"] - holder["host"]
    result["host_cpu_total_s"] = holder["end"] - holder["start"]
    result["startup_note"] = f"first {WARMUP_S:g}s not counted"
    return result


class MarkerWriter:
    """Appends decode-format lines with a unique id to each host's idle log; notes when."""

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
        marker = 10_000_000
        while not self._stop.is_set() and time.monotonic() < self._until:
            for name, path in self.paths.items():
                marker += 1
                stamp = time.strftime("%Y-%m-%d %H:%M:%S")
                line = (
                    f"[{stamp}] Decode batch, #running-req: 1, #token: {marker}, "
                    "token usage: 0.01, cuda graph: True, gen throughput (token/s): 1.00, "
                    "#queue-req: 0\n"
                )
                with open(path, "a") as fh:
                    fh.write(line)
                self.written[f"{name}:{marker}"] = time.time()
            self._stop.wait(random.uniform(0.5, 1.5) / self.rate)


def freshness(
    fleet: SimFleet, config: Path, hosts: list[str], seconds: float, on_screen: bool = False
) -> dict:
    """Append -> record in fleet state (the monitor), or append -> in the TUI's terminal output, for
    the one server shown (the TUI, with every host's markers still arriving)."""
    writer = MarkerWriter(fleet, hosts)
    writer.start(
        delay=8.0 if on_screen else 6.0, seconds=seconds
    )  # after connecting and reading backlogs
    if on_screen:
        result = run_worker("tui-screen", config, seconds + 10, extra=("--select", hosts[0]))
    else:
        result = run_worker("monitor", config, seconds + 8)  # and stops 2 s after the last marker
    writer.stop()
    written = {
        k: t for k, t in writer.written.items() if not on_screen or k.startswith(f"{hosts[0]}:")
    }
    latencies = sorted(
        (result["arrivals"][k] - t) * 1000 for k, t in written.items() if k in result["arrivals"]
    )
    lost = len(written) - len(latencies)
    if not latencies:
        return {"n": 0, "lost": lost}
    pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))]  # noqa: E731
    return {
        "n": len(latencies),
        "lost": lost,
        "p50_ms": pick(0.5),
        "p95_ms": pick(0.95),
        "max_ms": latencies[-1],
    }


def subset(config: Path, hosts: list[str], out: Path) -> Path:
    data = yaml.safe_load(config.read_text())
    data["hosts"] = {k: v for k, v in data["hosts"].items() if k in hosts}
    out.write_text(yaml.safe_dump(data, sort_keys=False))
    return out


def hanging_host(config: Path, out: Path) -> tuple[Path, socket.socket]:
    """The same fleet plus one host that accepts TCP connections and never speaks SSH."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    data = yaml.safe_load(config.read_text())
    template = next(iter(data["hosts"].values()))
    data["hosts"]["hangs"] = {
        **template,
        "address": "127.0.0.1",
        "port": sock.getsockname()[1],
        "servers": [],
    }
    out.write_text(yaml.safe_dump(data, sort_keys=False))
    return out, sock


def cold_start(config: Path, runs: int = 3) -> tuple[float, float, float, float]:
    """(status: table printed, status: process exited, the same one host after another,
    connect timeout). `status` runs RUNS times: the median of each (a 2-core machine is noisy);
    its bytecode compiled first, as `pip install` leaves it (where PYTHONDONTWRITEBYTECODE is set,
    a work tree's changed modules would otherwise be compiled again by every run, ~0.3 s)."""
    data = yaml.safe_load(config.read_text())
    timeout = float(next(iter(data["hosts"].values())).get("connect_timeout", 10))
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(REPO / "sglconsole")],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    times = [status_once(config, timeout) for _ in range(runs)]
    ours = statistics.median(printed for printed, _ in times)
    ours_exit = statistics.median(exited for _, exited in times)
    started = time.monotonic()
    for host in data["hosts"].values():  # one after another, as a for-loop over ssh does
        base = [
            "ssh",
            "-q",
            "-o",
            "BatchMode=yes",
            "-o",
            f"ConnectTimeout={timeout:g}",
            "-o",
            f"UserKnownHostsFile={host['known_hosts']}",
            "-i",
            host["identity_file"],
            "-p",
            str(host["port"]),
            f"{host['user']}@{host['address']}",
        ]
        subprocess.run(
            [*base, "nvidia-smi", "--query-gpu=index,utilization.gpu,memory.used", "--format=csv"],
            capture_output=True,
            timeout=timeout + 30,
        )
    return ours, ours_exit, time.monotonic() - started, timeout


def status_once(config: Path, timeout: float) -> tuple[float, float]:
    """(the table printed, the process exited), seconds after `sglconsole status` started."""
    started = time.monotonic()
    status = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sglconsole",
            "status",
            "-c",
            str(config),
            "--timeout",
            str(timeout + 5),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    printed = started
    while os.read(
        status.stdout.fileno(), 65536
    ):  # the table is printed in one go, then connections close
        printed = time.monotonic()
    status.wait(timeout=300)
    return printed - started, time.monotonic() - started


def parser_ratio(line_format: str = "0.5.23") -> dict:
    """0.5.23's own lines (which SGLang's regex, wanting a comma 0.5.23 no longer writes, fails
    on) and the legacy lines it matches in full: the harder comparison."""
    out = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "parser_bench.py"),
            "--json",
            "--format",
            line_format,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
    )
    return json.loads(out.stdout) if out.returncode == 0 else {"error": out.stderr[-500:]}


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


def restore_overhead(workdir: Path, runs: int = 3) -> dict:
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
        time.sleep(5)
        log = fleet.hosts["ct129"].root / "logs" / "sglang-30000.log"
        state = workdir / "state"
        console = median_run(
            [asyncio.run(restore_in_console(fleet.config_path, log, state)) for _ in range(runs)]
        )
        cli = median_run([restore_via_cli(fleet.config_path, log, state) for _ in range(runs)])
        real_parser = with_real_parser_cost(fleet, log, workdir / "state-real-parser")
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


def with_real_parser_cost(fleet: SimFleet, log: Path, state: Path) -> dict:
    """Restore twice on a host whose parser costs what a real one does: the first pays it (its
    preflight asks the host's SGLang), the second is answered from the parser cache."""
    [server_args] = (fleet.hosts["ct129"].root / "env").rglob("sglang/srt/server_args.py")
    server_args.write_text(f"import time\ntime.sleep({REAL_PARSER_S})\n" + server_args.read_text())
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
        "parser_s": REAL_PARSER_S,
        "cold_overhead_s": cold["overhead_s"],
        "warm_overhead_s": warm["overhead_s"],
        "cold_ok": cold["ok"],
        "warm_ok": warm["ok"],
    }


# --------------------------------------------------------------------- main


def exit_on_signals() -> None:
    """SIGTERM (`timeout`, kill) and SIGHUP (a closed terminal) unwind like Ctrl-C: every `finally`
    runs, so the simulated fleet is stopped instead of left running."""
    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, lambda received, _frame: sys.exit(128 + received))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=16)
    parser.add_argument("--servers", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--rss-minutes", type=float, default=10)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results.json")
    parser.add_argument(
        "--only-restore",
        action="store_true",
        help="measure only restore's overhead and update those keys of --out",
    )
    parser.add_argument(
        "--only-cold-start",
        action="store_true",
        help="measure only the cold start (--hosts x --servers and one that hangs) and update "
        "those keys of --out",
    )
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="sglconsole-perf-"))
    if args.only_cold_start:
        exit_on_signals()
        measured = only_cold_start(workdir, args.hosts, args.servers)
        print_table(results_file.merge(args.out, measured))
        return 0
    if args.only_restore:
        exit_on_signals()
        measured: dict = {}
        record_restore(measured, restore_overhead(workdir))
        print_table(results_file.merge(args.out, measured))
        return 0
    results: dict = {
        "hosts": args.hosts,
        "servers_per_host": args.servers,
        "seconds": args.seconds,
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
    }
    ssh = "sshd" if os.geteuid() == 0 else "asyncssh"
    fleet = SimFleet(
        workdir / "fleet", bench_hosts(args.hosts, args.servers), demo_profiles(), ssh=ssh
    )
    print(f"starting {args.hosts} simulated hosts x {args.servers} servers ({ssh}) ...", flush=True)
    exit_on_signals()
    try:
        fleet.start(timeout=120)
        fleet.wait_ready(timeout=300)
        time.sleep(10)  # let the load settle into steady decode lines
        config = fleet.config_path
        host_minutes = args.hosts * args.seconds / 60
        phases = {}
        for mode in ("naive", "monitor", "tui"):
            print(f"phase {mode}: {args.seconds:g}s ...", flush=True)
            phases[mode] = measured(fleet, mode, config, args.seconds)
        results["phases"] = {
            m: {
                "cpu_s": p["cpu_s"],
                "host_cpu_s": p["host_cpu_s"],
                "cpu_s_per_host_minute": p["cpu_s"] / host_minutes,
                "host_cpu_s_per_host_minute": p["host_cpu_s"] / host_minutes,
                "with_startup": {
                    "cpu_s": p["cpu_total_s"],
                    "host_cpu_s": p["host_cpu_total_s"],
                    "seconds": args.seconds + WARMUP_S,
                },
            }
            for m, p in phases.items()
        }
        naive = phases["naive"]
        results["cpu_console_vs_naive"] = phases["monitor"]["cpu_s"] / naive["cpu_s"]
        results["cpu_tui_vs_naive"] = phases["tui"]["cpu_s"] / naive["cpu_s"]
        results["cpu_host_vs_naive"] = phases["monitor"]["host_cpu_s"] / naive["host_cpu_s"]
        results["with_startup"] = {  # the same ratios counting the first seconds too
            "cpu_console_vs_naive": phases["monitor"]["cpu_total_s"] / naive["cpu_total_s"],
            "cpu_tui_vs_naive": phases["tui"]["cpu_total_s"] / naive["cpu_total_s"],
            "cpu_host_vs_naive": phases["monitor"]["host_cpu_total_s"] / naive["host_cpu_total_s"],
        }
        names = list(fleet.hosts)
        print("freshness ...", flush=True)
        one = freshness(
            fleet, subset(config, names[:1], workdir / "one.yaml"), names[:1], min(args.seconds, 30)
        )
        many = freshness(fleet, config, names, min(args.seconds, 30))
        screen_one = freshness(
            fleet,
            subset(config, names[:1], workdir / "one.yaml"),
            names[:1],
            min(args.seconds, 30),
            True,
        )
        screen_many = freshness(fleet, config, names, min(args.seconds, 30), True)
        results["freshness"] = {
            "1_host": one,
            f"{args.hosts}_hosts": many,
            "tui_on_screen": {"1_host": screen_one, f"{args.hosts}_hosts": screen_many},
        }
        results["freshness_p95_ms"] = many.get("p95_ms")
        results["freshness_tui_p95_ms"] = screen_many.get("p95_ms")
        print("cold start ...", flush=True)
        results.update(cold_start_figures(config, workdir))
        if args.rss_minutes > 0:
            print(f"memory over {args.rss_minutes:g} minutes ...", flush=True)
            run = run_worker("monitor", config, args.rss_minutes * 60, rss_at=(60.0,))
            first, last = run["rss_kib"].get("60.0"), run["rss_end_kib"]
            results.update(
                rss_minute_1_kib=first,
                rss_end_kib=last,
                rss_minutes=args.rss_minutes,
                rss_growth=(last - first) / first if first else None,
            )
    finally:
        fleet.stop()
    print("parser ...", flush=True)
    parser_result = parser_ratio()
    results["parser"] = parser_result
    results["parser_vs_sglang_regex"] = parser_result.get("parser_vs_sglang_regex")
    results["parser_legacy"] = parser_ratio("legacy")
    results["parser_vs_sglang_regex_legacy"] = results["parser_legacy"].get(
        "parser_vs_sglang_regex"
    )
    print("restore overhead ...", flush=True)
    record_restore(results, restore_overhead(workdir))
    # the other benches' keys (idle_cost.py, prom_scale.py, router_*.py) stay
    results = results_file.merge(args.out, results)
    print_table(results)
    return 0


def cold_start_figures(config: Path, workdir: Path) -> dict:
    with_hang, sock = hanging_host(config, workdir / "hang.yaml")
    try:
        ours, ours_exit, serial, timeout = cold_start(with_hang)
    finally:
        sock.close()
    return {
        "cold_start_s": ours,
        "cold_start_exit_s": ours_exit,
        "cold_start_serial_s": serial,
        "connect_timeout_s": timeout,
    }


def only_cold_start(workdir: Path, hosts: int, servers: int) -> dict:
    """The cold start alone, on the fleet the whole run starts (its hosts under load)."""
    ssh = "sshd" if os.geteuid() == 0 else "asyncssh"
    fleet = SimFleet(workdir / "fleet", bench_hosts(hosts, servers), demo_profiles(), ssh=ssh)
    print(f"starting {hosts} simulated hosts x {servers} servers ({ssh}) ...", flush=True)
    try:
        fleet.start(timeout=120)
        fleet.wait_ready(timeout=300)
        time.sleep(10)  # as the whole run: the load settles into steady decode lines
        print("cold start ...", flush=True)
        return cold_start_figures(fleet.config_path, workdir)
    finally:
        fleet.stop()


def record_restore(results: dict, restore: dict) -> None:
    results["restore"] = restore
    results["restore_overhead_s"] = restore["overhead_s"]
    # plus starting Python and connecting
    results["restore_overhead_cli_s"] = restore["cli"]["overhead_s"]
    results["restore_overhead_real_parser_cold_s"] = restore["real_parser"]["cold_overhead_s"]
    results["restore_overhead_real_parser_warm_s"] = restore["real_parser"]["warm_overhead_s"]


def print_table(results: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    fleet_size = f"{results['hosts']} hosts x {results['servers_per_host']} servers"
    table = Table(title=f"sglconsole vs naive polling: {fleet_size}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_column("target")
    for phase, data in results.get("phases", {}).items():
        table.add_row(
            f"{phase}: CPU s per host-minute (watcher / hosts)",
            f"{data['cpu_s_per_host_minute']:.3f} / {data['host_cpu_s_per_host_minute']:.3f}",
            "",
        )
    rows = [
        ("cpu_console_vs_naive", "{:.3f}", "<= 0.25"),
        ("cpu_tui_vs_naive", "{:.3f}", "<= 2x console"),
        ("cpu_host_vs_naive", "{:.3f}", "<= 0.2"),
        ("freshness_p95_ms", "{:.0f} ms", "<= 250 ms"),
        ("freshness_tui_p95_ms", "{:.0f} ms", "(on screen)"),
        ("cold_start_s", "{:.2f} s", "<= connect timeout + 0.5 s"),
        ("cold_start_exit_s", "{:.2f} s", ""),
        ("cold_start_serial_s", "{:.2f} s", ""),
        ("connect_timeout_s", "{:.0f} s", ""),
        ("parser_vs_sglang_regex", "{:.2f}x", ">= 1.0"),
        ("parser_vs_sglang_regex_legacy", "{:.2f}x", "(lines the regex matches)"),
        ("restore_overhead_s", "{:.2f} s", "<= 0.5 s"),
        ("restore_overhead_cli_s", "{:.2f} s", ""),
        ("restore_overhead_real_parser_cold_s", "{:.2f} s", "~ the parser's 11.8 s, once"),
        ("restore_overhead_real_parser_warm_s", "{:.2f} s", "<= 1 s"),
        ("rss_growth", "{:+.1%}", "<= 10%"),
    ]
    for key, fmt, target in rows:
        value = results.get(key)
        table.add_row(key, "-" if value is None else fmt.format(value), target)
    Console().print(table)


if __name__ == "__main__":
    raise SystemExit(main())
