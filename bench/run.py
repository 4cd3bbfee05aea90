"""sglconsole's cost and latency at fleet scale, against the naive way, in one run on this machine.

    python bench/run.py [--hosts 16] [--servers 4] [--seconds 60] [--rss-minutes 10]
                        [--runs 3] [--skip-parser] [--smallest] [--at-once]
                        [--out bench/results.json]
                        [--only-cold-start | --only-restore]

Starts a simulated fleet (hosts x servers, each server under load, logging a decode line about
once a second), then watches it for --seconds each with (a) sglconsole's monitor, headless,
(b) the TUI, headless, and (c) the naive baseline: every second, for every host, a new
`ssh host nvidia-smi --query-gpu=...` and `ssh host tail -n 50 LOGS`. Reports CPU per
host-minute of the watcher and of the hosts' side (sshd and everything it spawned), the
freshness of log lines (append on a host -> record in fleet state), cold start with one host
that hangs, the parser against SGLang's regex, restore's overhead beyond the server's own
startup, and the monitor's memory growth. Writes bench/results.json, only once every measure it
promises (PROMISES) has samples: else `FAILED: bench/run.py: KEY: WHY` and exit 1.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import yaml  # noqa: E402

from bench import checks, parser_bench, worker  # noqa: E402
from bench.freshness import freshness, subset  # noqa: E402
from bench.phases import WARMUP_S, exit_on_signals, measured, run_worker  # noqa: E402
from bench.restore_overhead import REAL_PARSER_S, record_restore, restore_overhead  # noqa: E402
from sglconsole.sim.fleet.scenarios import bench_hosts, demo_profiles  # noqa: E402
from sglconsole.sim.fleet.start import SimFleet  # noqa: E402

SCRIPT = "bench/run.py"
PROMISES: checks.Promises = {
    # key written -> the count that proves it measured (bench.checks); {hosts}: --hosts
    "phases.naive.cpu_s": "phases.naive.cpu_s",
    "phases.monitor.cpu_s": "phases.monitor.cpu_s",
    "phases.tui.cpu_s": "phases.tui.cpu_s",
    "cpu_console_vs_naive": "phases.naive.cpu_s",
    "cpu_tui_vs_naive": "phases.naive.cpu_s",
    "cpu_host_vs_naive": "phases.naive.host_cpu_s",
    "freshness.1_host.p95_ms": "freshness.1_host.n",
    "freshness_p95_ms": "freshness.{hosts}_hosts.n",
    "freshness.tui_on_screen.1_host.p95_ms": "freshness.tui_on_screen.1_host.n",
    "freshness_tui_p95_ms": "freshness.tui_on_screen.{hosts}_hosts.n",
    "cold_start_s": None,
    "cold_start_exit_s": None,
    "cold_start_serial_s": None,
    "connect_timeout_s": None,
    "rss_minute_1_kib": "rss_minute_1_kib",
    "rss_end_kib": "rss_end_kib",
    "rss_growth": "rss_minute_1_kib",
    "restore_overhead_s": "restore.ok",  # a failed restore measured nothing
    "restore_overhead_cli_s": "restore.ok",
    "restore_overhead_real_parser_cold_s": "restore.real_parser.cold_ok",
    "restore_overhead_real_parser_warm_s": "restore.real_parser.warm_ok",
}
PARSER_PROMISES: checks.Promises = {  # unless --skip-parser
    "parser_vs_sglang_regex": "parser.sglang_regex_seconds",
    "parser_vs_sglang_regex_legacy": "parser_legacy.sglang_regex_matches",
}
RESTORE_PROMISES = {key: why for key, why in PROMISES.items() if key.startswith("restore_")}
COLD_START_PROMISES = {
    key: why
    for key, why in PROMISES.items()
    if key.startswith("cold_start_") or key == "connect_timeout_s"
}
SMALLEST = {
    "hosts": 2,
    "servers": 1,
    "seconds": 3.0,
    "warmup": 4.0,
    "settle": 2.0,
    "connect_s": 4.0,
    "rss_minutes": 0.1,
    "parser_lines": 20_000,
    "real_parser_s": 1.0,
    "runs": 1,
    "at_once": True,
}


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


def cold_start(config: Path, runs: int) -> tuple[float, float, float, float]:
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


def cold_start_figures(config: Path, workdir: Path, runs: int) -> dict:
    print("cold start ...", flush=True)
    with_hang, sock = hanging_host(config, workdir / "hang.yaml")
    try:
        ours, ours_exit, serial, timeout = cold_start(with_hang, runs)
    finally:
        sock.close()
    return {
        "cold_start_s": ours,
        "cold_start_exit_s": ours_exit,
        "cold_start_serial_s": serial,
        "connect_timeout_s": timeout,
    }


def only_cold_start(workdir: Path, args: argparse.Namespace) -> dict:
    """The cold start alone, on the fleet the whole run starts (its hosts under load)."""
    ssh = "sshd" if os.geteuid() == 0 else "asyncssh"
    fleet = SimFleet(
        workdir / "fleet", bench_hosts(args.hosts, args.servers), demo_profiles(), ssh=ssh
    )
    print(f"starting {args.hosts} simulated hosts x {args.servers} servers ({ssh}) ...", flush=True)
    try:
        fleet.start(timeout=120)
        fleet.wait_ready(timeout=300)
        time.sleep(args.settle)  # as the whole run: the load settles into steady decode lines
        return cold_start_figures(fleet.config_path, workdir, args.runs)
    finally:
        fleet.stop()


def parser_ratio(lines: int, runs: int, line_format: str = "0.5.23") -> dict:
    """0.5.23's own lines (which SGLang's regex, wanting a comma 0.5.23 no longer writes, fails
    on) and the legacy lines it matches in full: the harder comparison."""
    command = [sys.executable, str(REPO / "bench" / "parser_bench.py"), "--json"]
    command += ["--format", line_format, "--lines", str(lines)]
    command += ["--mixed-lines", str(min(lines, 200_000)), "--repeat", str(runs)]
    out = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        said = [line for line in out.stderr.splitlines() if line.startswith("FAILED: ")]
        print("\n".join(said) or out.stderr[-2000:], file=sys.stderr, flush=True)
        checks.fail(
            SCRIPT, "parser_vs_sglang_regex", f"bench/parser_bench.py failed ({line_format})"
        )
    return json.loads(out.stdout)


def watch_phases(fleet, config: Path, args: argparse.Namespace, results: dict) -> None:
    """CPU of the naive poller, the monitor and the TUI, each for --seconds after --warmup."""
    host_minutes = args.hosts * args.seconds / 60
    phases = {}
    for mode in ("naive", "monitor", "tui"):
        print(f"phase {mode}: {args.seconds:g}s ...", flush=True)
        phases[mode] = measured(fleet, mode, config, args.seconds, args.warmup)
    results["phases"] = {
        mode: {
            "cpu_s": found["cpu_s"],
            "host_cpu_s": found["host_cpu_s"],
            "cpu_s_per_host_minute": found["cpu_s"] / host_minutes,
            "host_cpu_s_per_host_minute": found["host_cpu_s"] / host_minutes,
            "with_startup": {
                "cpu_s": found["cpu_total_s"],
                "host_cpu_s": found["host_cpu_total_s"],
                "seconds": args.seconds + args.warmup,
            },
        }
        for mode, found in phases.items()
    }
    naive, monitor, tui = phases["naive"], phases["monitor"], phases["tui"]
    results["cpu_console_vs_naive"] = checks.ratio(monitor["cpu_s"], naive["cpu_s"])
    results["cpu_tui_vs_naive"] = checks.ratio(tui["cpu_s"], naive["cpu_s"])
    results["cpu_host_vs_naive"] = checks.ratio(monitor["host_cpu_s"], naive["host_cpu_s"])
    results["with_startup"] = {  # the same ratios counting the first seconds too
        "cpu_console_vs_naive": checks.ratio(monitor["cpu_total_s"], naive["cpu_total_s"]),
        "cpu_tui_vs_naive": checks.ratio(tui["cpu_total_s"], naive["cpu_total_s"]),
        "cpu_host_vs_naive": checks.ratio(monitor["host_cpu_total_s"], naive["host_cpu_total_s"]),
    }


def freshness_all(fleet, config: Path, args, workdir: Path) -> dict:
    """The monitor's and the TUI's, watching one host and all: one after another, or (--at-once)
    the four at once (each counts only the markers of its own writer)."""
    names, seconds = list(fleet.hosts), min(args.seconds, 30)
    print("freshness ...", flush=True)
    one_host = subset(config, names[:1], workdir / "one.yaml")
    connect = args.connect_s
    runs = {
        "one": lambda: freshness(fleet, one_host, names[:1], seconds, connect_s=connect),
        "many": lambda: freshness(fleet, config, names, seconds, connect_s=connect),
        "screen_one": lambda: freshness(fleet, one_host, names[:1], seconds, True, connect),
        "screen_many": lambda: freshness(fleet, config, names, seconds, True, connect),
    }
    found = at_once(runs, args.at_once)
    many, screen_many = found["many"], found["screen_many"]
    return {
        "freshness": {
            "1_host": found["one"],
            f"{args.hosts}_hosts": many,
            "tui_on_screen": {"1_host": found["screen_one"], f"{args.hosts}_hosts": screen_many},
        },
        "freshness_p95_ms": many["p95_ms"],
        "freshness_tui_p95_ms": screen_many["p95_ms"],
    }


def memory(config: Path, minutes: float) -> dict:
    """RSS at minute 1 (halfway, in a run shorter than 2 minutes) and at the end."""
    print(f"memory over {minutes:g} minutes ...", flush=True)
    mark = min(60.0, minutes * 30)
    found = run_worker("monitor", config, minutes * 60, rss_at=(mark,))
    first, last = found["rss_kib"].get(str(mark)), found["rss_end_kib"]
    return {
        "rss_minute_1_kib": first,
        "rss_first_at_s": mark,
        "rss_end_kib": last,
        "rss_minutes": minutes,
        "rss_growth": checks.ratio(last - first if first else None, first),
    }


def arguments(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=16)
    parser.add_argument("--servers", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--warmup", type=float, default=WARMUP_S, help="seconds not counted")
    parser.add_argument("--settle", type=float, default=10, help="seconds of load before")
    parser.add_argument(
        "--connect-s", type=float, default=6, help="freshness: seconds to connect before markers"
    )
    parser.add_argument("--rss-minutes", type=float, default=10, help="0: no memory measure")
    parser.add_argument("--parser-lines", type=int, default=1_000_000)
    parser.add_argument("--real-parser-s", type=float, default=REAL_PARSER_S)
    parser.add_argument(
        "--runs",
        type=int,
        default=3,
        help="how often the repeated measures run (cold start and restore: their median; the "
        "parser: its best)",
    )
    parser.add_argument(
        "--skip-parser",
        action="store_true",
        help="no parser measure (it needs SGLang's regex: tools/real_sglang_venv.sh)",
    )
    parser.add_argument(
        "--at-once",
        action="store_true",
        help="run the stages that can overlap at once (restore and the parser beside the fleet; "
        "freshness, cold start and memory together): every key in far less time, the figures "
        "sharing the machine (--smallest sets it)",
    )
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
    return checks.parse(parser, SMALLEST, argv)


def promised(args: argparse.Namespace) -> dict:
    """What this run promises: PROMISES, less what its settings leave out."""
    if args.only_restore:
        return dict(RESTORE_PROMISES)
    if args.only_cold_start:
        return dict(COLD_START_PROMISES)
    keep = {**PROMISES, **({} if args.skip_parser else PARSER_PROMISES)}
    if args.rss_minutes <= 0:
        keep = {key: why for key, why in keep.items() if not key.startswith("rss_")}
    return keep


def main(argv=None) -> int:
    args = arguments(argv)
    checks.require_hooks(SCRIPT, worker.HOOKS["monitor"] + worker.HOOKS["tui-screen"])
    only = args.only_restore or args.only_cold_start
    if not args.skip_parser and not only and parser_bench.regex_python() is None:
        checks.fail(SCRIPT, "parser_vs_sglang_regex", parser_bench.NO_REGEX + "; or --skip-parser")
    workdir = Path(tempfile.mkdtemp(prefix="sglconsole-perf-"))
    exit_on_signals()
    if args.only_restore:
        results: dict = {}
        record_restore(
            results, restore_overhead(workdir, args.real_parser_s, args.runs, args.settle)
        )
        print_table(checks.save(SCRIPT, args.out, results, promised(args)))
        return 0
    if args.only_cold_start:
        results = only_cold_start(workdir, args)
        print_table(checks.save(SCRIPT, args.out, results, promised(args)))
        return 0
    results = {
        "hosts": args.hosts,
        "servers_per_host": args.servers,
        "seconds": args.seconds,
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
    }
    # with --at-once, restore (a fleet of its own) and the parser (CPU alone) run beside the rest
    beside = Beside(args.at_once)
    if not args.skip_parser:
        beside.start("parser", lambda: parser_figures(args))
    beside.start("restore overhead", lambda: restore_beside(workdir, args))
    ssh = "sshd" if os.geteuid() == 0 else "asyncssh"
    fleet = SimFleet(
        workdir / "fleet", bench_hosts(args.hosts, args.servers), demo_profiles(), ssh=ssh
    )
    print(f"starting {args.hosts} simulated hosts x {args.servers} servers ({ssh}) ...", flush=True)
    try:
        fleet.start(timeout=120)
        fleet.wait_ready(timeout=300)
        time.sleep(args.settle)  # let the load settle into steady decode lines
        config = fleet.config_path
        watch_phases(fleet, config, args, results)  # never at once: each phase's CPU is its own
        stages = {"freshness": lambda: freshness_all(fleet, config, args, workdir)}
        stages["cold start"] = lambda: cold_start_figures(config, workdir, args.runs)
        if args.rss_minutes > 0:
            stages["memory"] = lambda: memory(config, args.rss_minutes)
        for found in at_once(stages, args.at_once).values():
            results.update(found)
    finally:
        fleet.stop()
    found = beside.results()
    if not args.skip_parser:
        results.update(found["parser"])
    record_restore(results, found["restore overhead"])
    # the other benches' keys (idle_cost.py, prom_scale.py, router_*.py) stay
    results = checks.save(SCRIPT, args.out, results, promised(args), vars(args))
    print_table(results)
    return 0


class Beside:
    """Stages that need nothing of the fleet's: with AT_ONCE each runs in a thread of its own
    from `start` on, else when `results` asks (after the fleet's stages, as before)."""

    def __init__(self, at_once: bool):
        self._pool = ThreadPoolExecutor() if at_once else None
        self._stages: dict[str, Callable[[], dict] | Future] = {}

    def start(self, name: str, stage: Callable[[], dict]) -> None:
        self._stages[name] = stage if self._pool is None else self._pool.submit(stage)

    def results(self) -> dict[str, dict]:
        found = {
            name: stage.result() if isinstance(stage, Future) else stage()
            for name, stage in self._stages.items()
        }
        if self._pool is not None:
            self._pool.shutdown()
        return found


def at_once(stages: dict[str, Callable[[], dict]], together: bool) -> dict[str, dict]:
    """Each stage's result: one after another (each measured alone), or TOGETHER in threads (the
    smallest run: every key, in seconds; the figures then share the machine)."""
    if not together:
        return {name: stage() for name, stage in stages.items()}
    with ThreadPoolExecutor(len(stages)) as pool:
        running = {name: pool.submit(stage) for name, stage in stages.items()}
        return {name: future.result() for name, future in running.items()}


def restore_beside(workdir: Path, args: argparse.Namespace) -> dict:
    """Restore's overhead: in this process when alone; at once, in a run of its own (its console
    sets XDG_STATE_HOME for a cold parser cache, which this process's workers must not see)."""
    if not args.at_once:
        print("restore overhead ...", flush=True)
        return restore_overhead(workdir, args.real_parser_s, args.runs, args.settle)
    out = workdir / "restore.json"
    command = [sys.executable, str(Path(__file__).resolve()), "--only-restore", "--out", str(out)]
    command += ["--runs", str(args.runs), "--settle", str(args.settle)]
    command += ["--real-parser-s", str(args.real_parser_s)]
    print("restore overhead (beside) ...", flush=True)
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        said = [line for line in done.stderr.splitlines() if line.startswith("FAILED: ")]
        print("\n".join(said) or done.stderr[-2000:], file=sys.stderr, flush=True)
        checks.fail(SCRIPT, "restore_overhead_s", "bench/run.py --only-restore failed")
    return json.loads(out.read_text())["restore"]


def parser_figures(args: argparse.Namespace) -> dict:
    print("parser ...", flush=True)
    parser = parser_ratio(args.parser_lines, args.runs)
    legacy = parser_ratio(args.parser_lines, args.runs, "legacy")
    return {
        "parser": parser,
        "parser_vs_sglang_regex": parser["parser_vs_sglang_regex"],
        "parser_legacy": legacy,
        "parser_vs_sglang_regex_legacy": legacy["parser_vs_sglang_regex"],
    }


def print_table(results: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    fleet_size = f"{results.get('hosts')} hosts x {results.get('servers_per_host')} servers"
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
