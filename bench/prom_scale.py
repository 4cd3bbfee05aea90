"""The console in Prometheus mode at fleet scale: its CPU and how soon a change shows, in one run.

    python bench/prom_scale.py [--hosts 250] [--servers 4] [--seconds 60] [--scrape 2]
                               [--interval 1] [--out bench/results.json]

One process (bench/sglang_target.py) serves the /metrics of hosts x servers SGLang servers
(SGLang 0.5.12's real names, HELP/TYPE, label sets and histograms, each with its own
`instance="hostNNN.example:PORT"`); Debian's real Prometheus scrapes it every --scrape seconds
(`honor_labels: true`, so each server keeps its instance); the console's monitor
(bench/worker.py `prom`, hosts.yaml `source: {prometheus: URL, interval: --interval}`; the hosts'
`.example` addresses are never contacted) reads it. Once a second (jittered) the target gives one
random server a number of running requests never used before; the bench notes when that number
is first in the server's view (the snapshot every view and `status --json` render).

Measured after a warm-up that is not counted: the console's CPU in cores, and side by side the
CPU of Prometheus and of the target in the same seconds; freshness p50/p95/max (flip -> view)
against the scrape interval. Writes prom_console_cpu_cores_1000, prom_freshness_p95_s and the
details under prom_scale into --out (read, modify, write: the other keys stay).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import httpx  # noqa: E402
import yaml  # noqa: E402

from bench import checks, results_file, worker  # noqa: E402
from bench.cpu import load, process_cpu_s  # noqa: E402
from bench.exporter_cost import free_port  # noqa: E402
from bench.phases import exit_on_signals, run_worker  # noqa: E402
from bench.sglang_target import fleet  # noqa: E402
from bench.worker import die_with_parent  # noqa: E402

CORES_BOUND = 0.2
FRESH_BOUND_SCRAPES = 2
# a change not on screen this long after it happened is lost (the console watches this long
# past the measured window, so a late one still counts as late, not lost)
LOST_AFTER_S = 10.0
SCRIPT = "bench/prom_scale.py"
PROMISES: checks.Promises = {
    # key written -> the count that proves it measured (bench.checks); {detail}: prom_scale, or
    # --only-detail's key (then the two headline keys are not written)
    "{detail}.console_cores": "{detail}.console_cores",
    "{detail}.prometheus_cores": "{detail}.prometheus_cores",
    "{detail}.console_vs_prometheus": "{detail}.prometheus_cores",
    "{detail}.scrape_duration_p95_s": None,
    "{detail}.freshness.p95_s": "{detail}.freshness.n",
    "{detail}.freshness_p95_in_scrapes": "{detail}.freshness.n",
    "prom_console_cpu_cores_1000": "{detail}.console_cores",
    "prom_freshness_p95_s": "{detail}.freshness.n",
}
SMALLEST = {"hosts": 5, "servers": 2, "seconds": 6.0, "warmup": 4.0, "scrape": 1.0}
NO_PROMETHEUS = "Debian's prometheus is not installed (apt-get install prometheus)"


def hosts_yaml(hosts: int, servers: int, prometheus: str, interval: float) -> dict:
    by_host: dict[str, dict] = {}
    for address, port in fleet(hosts, servers):
        host = by_host.setdefault(address.split(".")[0], {"address": address, "servers": []})
        host["servers"].append({"port": port, "profile": "qwen8b-tp1", "gpus": [port - 30000]})
    return {
        "source": {"prometheus": prometheus, "interval": interval},
        "profiles": {"qwen8b-tp1": {"args": ["--model-path", "/models/Qwen3-8B"]}},
        "hosts": by_host,
    }


class Prometheus:
    """Debian's Prometheus on loopback, a temporary TSDB, scraping one target with its labels."""

    def __init__(self, workdir: Path, target: str, servers: list[str], scrape: float):
        binary = shutil.which("prometheus") or "/usr/bin/prometheus"
        workdir.mkdir(parents=True, exist_ok=True)
        config = workdir / "prometheus.yml"
        config.write_text(
            f"global:\n  scrape_interval: {scrape:g}s\n  scrape_timeout: {scrape:g}s\n"
            "scrape_configs:\n  - job_name: sglang\n    honor_labels: true\n"
            "    static_configs:\n"
            + "".join(  # each server a target: its own path, `instance` its address (for `up`)
                f"      - targets: [{json.dumps(target)}]\n"
                f"        labels: {{__metrics_path__: {json.dumps(f'/metrics/{index}')}, "
                f"instance: {json.dumps(address)}}}\n"
                for index, address in enumerate(servers)
            )
        )
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = workdir / "prometheus.log"
        self.process = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=self.log.open("w"),
            preexec_fn=die_with_parent,
        )

    def query(self, promql: str) -> list[dict]:
        reply = httpx.get(self.url + "/api/v1/query", params={"query": promql}, timeout=30)
        if reply.status_code != 200:  # still starting ("Service Unavailable"), or a bad query
            return []
        body = reply.json()
        return body["data"]["result"] if body.get("status") == "success" else []

    def wait_for(self, servers: int, timeout: float = 180) -> None:
        """Until Prometheus has two scrapes of every server (tok/s needs two samples)."""
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"prometheus exited:\n{self.log.read_text()[-3000:]}")
            try:
                if len(self.query("irate(sglang:generation_tokens_total[1m])")) >= servers:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"prometheus never had {servers} servers: {self.query('up')}")
            time.sleep(0.5)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()


def start_target(hosts: int, servers: int, port: int, histograms: bool) -> tuple:
    command = [sys.executable, "-m", "bench.sglang_target", "--hosts", str(hosts)]
    command += ["--servers", str(servers), "--port", str(port)]
    command += [] if histograms else ["--no-histograms"]
    process = subprocess.Popen(
        command, cwd=REPO, stdout=subprocess.PIPE, text=True, preexec_fn=die_with_parent
    )
    return process, json.loads(process.stdout.readline())


def freshness(
    flips: list, arrivals: dict, since: float, until: float, watched_until: float
) -> dict:
    """flip -> first in the view, for flips inside the measured window; a flip overtaken by the
    next flip of the same server before it could show is left out (never on screen, rightly).
    Lost: a flip the console watched for LOST_AFTER_S and never showed; one it could not watch
    that long (it stopped first) is neither seen nor lost."""
    latest: dict[str, float] = {}
    waits, lost = [], 0
    for at, instance, value in sorted(flips, reverse=True):
        later = latest.get(instance)
        latest[instance] = at
        if not since <= at <= until:
            continue
        address, _, port = instance.rpartition(":")
        seen = arrivals.get(f"{address.split('.')[0]}|{port}|{int(value)}")
        if seen is not None:
            waits.append(seen - at)
        elif (later is None or later - at > LOST_AFTER_S) and watched_until - at >= LOST_AFTER_S:
            lost += 1
    waits.sort()

    def pick(q: float) -> float | None:
        return waits[min(len(waits) - 1, int(q * len(waits)))] if waits else None

    return {
        "n": len(waits),
        "lost": lost,
        "p50_s": pick(0.5),
        "p95_s": pick(0.95),
        "max_s": waits[-1] if waits else None,
    }


def measure(args: argparse.Namespace, workdir: Path) -> dict:
    target_port = free_port()
    target, shape = start_target(args.hosts, args.servers, target_port, not args.no_histograms)
    servers = [f"{host}:{port}" for host, port in fleet(args.hosts, args.servers)]
    prometheus = Prometheus(
        workdir / "prometheus", f"127.0.0.1:{target_port}", servers, args.scrape
    )
    count = args.hosts * args.servers
    try:
        prometheus.wait_for(count)
        config = workdir / "hosts.yaml"
        config.write_text(
            yaml.safe_dump(hosts_yaml(args.hosts, args.servers, prometheus.url, args.interval))
        )
        holder: dict = {}

        def console() -> None:
            try:
                holder["console"] = run_worker(
                    "prom", config, args.seconds + LOST_AFTER_S, warmup=args.warmup
                )
            except (Exception, SystemExit) as exc:  # noqa: BLE001 - raised after the rest stop
                holder["error"] = exc

        thread = threading.Thread(target=console)
        began_wall = time.time()
        thread.start()
        time.sleep(args.warmup)
        pids = {"prometheus": prometheus.process.pid, "target": target.pid}
        began = {name: process_cpu_s(pid) for name, pid in pids.items()}
        window = time.monotonic()
        time.sleep(args.seconds)
        ended = {name: process_cpu_s(pid) for name, pid in pids.items()}
        took = time.monotonic() - window
        thread.join()
        if "error" in holder:
            raise holder["error"]
        flips = httpx.get(f"http://127.0.0.1:{target_port}/flips", timeout=30).json()
        scrape_s = prometheus.query('quantile(0.95, scrape_duration_seconds{job="sglang"})')
    finally:
        prometheus.stop()
        target.terminate()
        target.wait(30)
    found = holder["console"]
    cores = checks.ratio(found["cpu_s"], found["measured_s"])
    since = began_wall + args.warmup
    until = since + args.seconds - 2 * args.scrape
    fresh = freshness(flips, found["arrivals"], since, until, found["ended_wall"])
    others = {  # None: the process was gone before the window ended (nothing measured)
        f"{name}_cores": checks.ratio(ended[name] - began[name], took)
        if ended[name] is not None and began[name] is not None
        else None
        for name in pids
    }
    return {
        "servers": count,
        "hosts": args.hosts,
        "series": shape["series"],
        "pages_mb": shape["page_bytes"] / 1e6,
        "histograms": not args.no_histograms,
        "scrape_interval_s": args.scrape,
        "console_interval_s": args.interval,
        "seconds": args.seconds,
        "warmup_s": args.warmup,
        "console_cores": cores,
        **others,
        "console_vs_prometheus": checks.ratio(cores, others["prometheus_cores"]),
        "scrape_duration_p95_s": float(scrape_s[0]["value"][1]) if scrape_s else None,
        "freshness": fresh,
        "freshness_p95_in_scrapes": checks.ratio(fresh["p95_s"], args.scrape),
        "console_rss_end_kib": found["rss_end_kib"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=250)
    parser.add_argument("--servers", type=int, default=4, help="per host")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--warmup", type=float, default=20)
    parser.add_argument("--scrape", type=float, default=2.0, help="Prometheus's scrape interval")
    parser.add_argument("--interval", type=float, default=1.0, help="the console's read interval")
    parser.add_argument("--no-histograms", action="store_true", help="gauges and counters only")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results.json")
    parser.add_argument(
        "--only-detail",
        metavar="KEY",
        help="another setting: write the details under KEY, leave the headline keys as they are",
    )
    args = checks.parse(parser, SMALLEST)
    checks.require_hooks(SCRIPT, worker.HOOKS["prom"])
    if shutil.which("prometheus") is None and not Path("/usr/bin/prometheus").exists():
        checks.fail(SCRIPT, "prom_scale", NO_PROMETHEUS)
    exit_on_signals()
    workdir = Path(tempfile.mkdtemp(prefix="sglconsole-prom-scale-"))
    before = load()
    print(f"{args.hosts} hosts x {args.servers} servers, scraped every {args.scrape:g}s ...")
    detail = {**measure(args, workdir), "machine_before": before, "machine_after": load()}
    earlier = results_file.load(args.out)
    ssh = earlier.get("phases", {}).get("monitor", {}).get("cpu_s_per_host_minute")
    if ssh is not None:  # the SSH console measured by bench/run.py, scaled to as many hosts
        detail["ssh_console_cores_same_hosts_extrapolated"] = ssh * args.hosts / 60
    key = args.only_detail or "prom_scale"
    measured = {key: detail}
    promises = {key: why for key, why in PROMISES.items() if key.startswith("{detail}.")}
    if not args.only_detail:
        measured["prom_console_cpu_cores_1000"] = detail["console_cores"]
        measured["prom_freshness_p95_s"] = detail["freshness"]["p95_s"]
        promises = PROMISES
    checks.save(SCRIPT, args.out, measured, promises, {"detail": key})
    print(json.dumps(detail, indent=2))
    bound = FRESH_BOUND_SCRAPES * args.scrape
    print(
        f"console {detail['console_cores']:.3f} cores (bound {CORES_BOUND}), freshness p95 "
        f"{detail['freshness']['p95_s']} s (bound {bound:g} s = {FRESH_BOUND_SCRAPES} scrapes)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
