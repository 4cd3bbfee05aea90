"""`sglconsole exporter` end to end: the real command against the simulated demo fleet, scraped
over HTTP, read by a real Prometheus (Debian's package), alerting a real HTTP receiver."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import httpx
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from sglconsole import config
from sglconsole.actions.audit import AuditLog
from sglconsole.core.probe_result import ProbeResult
from sglconsole.exporter.service import Exporter as ExporterService
from sglconsole.sim.gpustate import pid_alive
from tests.alert_receiver import Receiver
from tests.e2e.test_status import cli
from tests.reliability.test_faults import quiet_host

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "examples" / "prometheus" / "sglconsole.rules.yml"
LABELS = {
    "host",
    "port",
    "profile",
    "status",
    "gpu",
    "server",
    "state",
    "verdict",
    "name",
    "version",
    "signal",
    "router",
    "kind",  # a sign before an outage or a kernel event: host_memory, oom_kill, xid, ecc, nvrm
    "type",  # an ECC count or a remapped row's: corrected, uncorrected, (un)correctable
}
NO_PROMETHEUS = (
    "Debian's prometheus package is not installed (./dev test and .ci/run install it where apt "
    "has it: apt-get install prometheus)"
)


class Exporter:
    """`sglconsole exporter` as a process, on a port of its choosing."""

    def __init__(self, config_path: Path, log: Path, *args: str, env: dict | None = None):
        self.log = log
        self.process = subprocess.Popen(
            [sys.executable, "-m", "sglconsole", "exporter", "-c", str(config_path)]
            + ["--listen", "127.0.0.1:0", *args],
            stdout=subprocess.DEVNULL,
            stderr=log.open("w"),
            env={**os.environ, **(env or {})},
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            found = re.search(r"serving http://127\.0\.0\.1:(\d+)/metrics", self.stderr())
            if found:
                self.url = f"http://127.0.0.1:{found.group(1)}"
                return
            assert self.process.poll() is None, self.stderr()
            time.sleep(0.1)
        self.stop()
        raise AssertionError(f"the exporter did not say where it listens: {self.stderr()}")

    def stderr(self) -> str:
        return self.log.read_text(errors="replace")

    def get(self, path: str, **kwargs) -> httpx.Response:
        return httpx.get(self.url + path, timeout=10, **kwargs)

    def samples(self) -> dict[str, list]:
        """Family name -> its samples, parsed by prometheus-client's own parser."""
        text = self.get("/metrics").text
        return {f.name: f.samples for f in text_string_to_metric_families(text)}

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError("the exporter did not stop on SIGTERM") from None


def value(samples: dict, name: str, **labels) -> float | None:
    found = [s.value for s in samples.get(name, []) if labels.items() <= s.labels.items()]
    assert len(found) <= 1, (name, labels, found)
    return found[0] if found else None


def wait_metrics(exporter: Exporter, predicate, timeout: float, what: str) -> dict:
    deadline = time.monotonic() + timeout
    samples: dict = {}
    while time.monotonic() < deadline:
        samples = exporter.samples()
        if predicate(samples):
            return samples
        time.sleep(0.5)
    statuses = [
        (s.labels["host"], s.labels["port"], s.labels["status"])
        for s in samples.get("sglconsole_server_status", [])
        if s.value == 1
    ]
    raise AssertionError(f"timed out waiting for {what}: {statuses}\n{exporter.stderr()[-3000:]}")


def demo_story(samples: dict) -> bool:
    status = "sglconsole_server_status"
    ct129 = {"host": "ct129", "port": "30000", "profile": "qwen27b-tp2-mtp"}
    return (
        value(samples, status, host="ct129", port="30000", status="SLOW") == 1
        and value(samples, status, host="old059", port="30000", status="LOOPING") == 1
        # SLOW shows before the host's SGLang has judged the drift (seconds on a fresh machine)
        and value(samples, "sglconsole_server_drift", **ct129) == 1
        # each host's SGLang judges its own servers' drift, on its own time: wait for the
        # unchanged server too, or an unjudged drift (no sample, truthfully) reads as a failure
        and value(samples, "sglconsole_server_drift", host="h200x4", port="30000") is not None
        # its one client sends back to back; a scrape between two requests reads 0, truthfully
        and (value(samples, "sglconsole_server_running_requests", **ct129) or 0) >= 1
    )


@pytest.fixture(scope="module")
def demo_exporter(demo_fleet, tmp_path_factory):
    state = tmp_path_factory.mktemp("exporter-state")
    audit = AuditLog(state / "sglconsole" / "actions.jsonl")
    # a restore a console on this machine finished a moment ago, and one that failed
    audit.end(audit.begin("restore", "ct129", 30000), True, "pid 1 ready")
    audit.end(audit.begin("restore", "h200x4", 30001), False, "failed: no")
    exporter = Exporter(
        demo_fleet.config_path,
        tmp_path_factory.mktemp("exporter") / "stderr.log",
        env={"XDG_STATE_HOME": str(state)},
    )
    yield exporter
    assert exporter.stop() == 0, exporter.stderr()


def test_metrics_tell_the_demo_story(demo_exporter):
    samples = wait_metrics(
        demo_exporter, demo_story, 90, "ct129 SLOW and drifted, old059 LOOPING, h200x4:30000 judged"
    )
    text = demo_exporter.get("/metrics").text
    # every family is ours, explained, and labelled only with bounded labels: no PID, no argv
    for family in text_string_to_metric_families(text):
        assert family.name.startswith("sglconsole_"), family.name
        assert family.documentation, family.name
        for sample in family.samples:
            assert set(sample.labels) <= LABELS, sample
            assert not any("--" in v or "/" in v for v in sample.labels.values()), sample
    status = "sglconsole_server_status"
    # a state set: exactly one status is 1 for each server
    for host, port in (("ct129", "30000"), ("old059", "30000"), ("h200x4", "30003")):
        ones = [
            s.labels["status"]
            for s in samples[status]
            if s.labels["host"] == host and s.labels["port"] == port and s.value == 1
        ]
        assert len(ones) == 1, (host, port, ones)
    assert value(samples, status, host="h200x4", port="30003", status="DOWN") == 1
    assert value(samples, status, host="ct129", port="30000", status="UP") == 0
    labels = {"host": "ct129", "port": "30000", "profile": "qwen27b-tp2-mtp"}
    assert 25 < value(samples, "sglconsole_server_decode_tokens_per_second", **labels) < 45
    assert value(samples, "sglconsole_server_accept_length", **labels) < 2.0
    assert value(samples, "sglconsole_server_running_requests", **labels) >= 1
    assert value(samples, "sglconsole_server_queued_requests", **labels) == 0
    assert value(samples, "sglconsole_server_drift", **labels) == 1
    assert value(samples, "sglconsole_server_drift_differences", **labels) > 0
    assert value(samples, "sglconsole_server_drift", host="h200x4", port="30000") == 0
    # the restore in the audit log, and none for the failed one
    assert 0 <= value(samples, "sglconsole_server_seconds_since_restore", **labels) < 600
    assert (
        value(samples, "sglconsole_server_seconds_since_restore", host="h200x4", port="30001")
        is None
    )
    # no probe has run: no verdict is invented
    assert samples.get("sglconsole_server_probe_verdict", []) == []
    # GPUs: numbers, and who holds each
    gpu0 = {"host": "h200x4", "gpu": "0"}
    assert value(samples, "sglconsole_gpu_memory_used_bytes", **gpu0) > 100_000 * 2**20
    assert value(samples, "sglconsole_gpu_memory_total_bytes", **gpu0) > 140_000 * 2**20
    assert 0 <= value(samples, "sglconsole_gpu_utilization_ratio", **gpu0) <= 1
    assert value(samples, "sglconsole_gpu_temperature_celsius", **gpu0) > 20
    assert value(samples, "sglconsole_gpu_power_watts", **gpu0) > 50
    held = {
        (s.labels["host"], s.labels["gpu"]): s.labels["server"]
        for s in samples["sglconsole_gpu_held_by"]
    }
    assert held[("h200x4", "0")] == "h200x4:30000" and held[("h200x4", "3")] == "free"
    assert held[("ct129", "0")] == held[("ct129", "1")] == "ct129:30000"
    for host in ("ct129", "h200x4", "old059"):
        assert value(samples, "sglconsole_host_up", host=host) == 1
        assert value(samples, "sglconsole_host_reachable", host=host, state="reachable") == 1
        assert value(samples, "sglconsole_host_error", host=host) == 0
    # no screen: the problems found at start are news (after the hold), each once
    wanted = [r"h200x4:30003 UNKNOWN -> DOWN", r"old059:30000 \w+ -> LOOPING"]
    deadline = time.monotonic() + 20
    while not all(re.search(f"alert problem: {w}", demo_exporter.stderr()) for w in wanted):
        assert time.monotonic() < deadline, demo_exporter.stderr()
        time.sleep(0.2)
    assert demo_exporter.stderr().count("alert problem: h200x4:30003 ") == 1


def test_repeated_scrapes_all_answer(demo_exporter):
    """Twenty scrapes in a row all answer (their time is printed; speed is measured in bench/)."""
    wait_metrics(demo_exporter, demo_story, 60, "the demo story")
    times = []
    for _ in range(20):
        began = time.perf_counter()
        assert demo_exporter.get("/metrics").status_code == 200
        times.append(time.perf_counter() - began)
    median = statistics.median(times)
    print(f"\nscrape of the demo fleet: median {median * 1000:.1f} ms, max {max(times) * 1000:.1f}")


def test_status_is_what_status_json_prints(demo_exporter, demo_fleet):
    wait_metrics(demo_exporter, demo_story, 60, "the demo story")
    reply = demo_exporter.get("/status")
    assert reply.status_code == 200 and reply.headers["content-type"] == "application/json"
    served = reply.json()
    printed = json.loads(cli("status", "-c", str(demo_fleet.config_path), "--json").stdout)
    assert served.keys() == printed.keys()
    assert served["hosts"].keys() == printed["hosts"].keys()
    for name, host in served["hosts"].items():
        other = printed["hosts"][name]
        assert host.keys() == other.keys()
        assert [s["port"] for s in host["servers"]] == [s["port"] for s in other["servers"]]
        for mine, theirs in zip(host["servers"], other["servers"], strict=True):
            assert mine.keys() == theirs.keys()
            assert (mine["pid"], mine["gpus"], mine["argv"]) == (
                theirs["pid"],
                theirs["gpus"],
                theirs["argv"],
            )
    down = served["hosts"]["h200x4"]["servers"][3]
    assert down["port"] == 30003 and down["status"] == "DOWN"
    assert demo_exporter.get("/nothing").status_code == 404
    assert httpx.post(demo_exporter.url + "/metrics").status_code == 405


# ------------------------------------------------------------------ alerts


def parse_time(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def test_a_host_that_drops_alerts_the_command_and_the_webhook(fleet_factory, tmp_path):
    events = tmp_path / "events.jsonl"
    write = "import sys; open(sys.argv[1], 'a').write(sys.stdin.read())"
    fleet = fleet_factory(
        [quiet_host("h200")],
        extra_config={"alert_command": [sys.executable, "-c", write, str(events)]},
    )
    receiver = Receiver()
    exporter = Exporter(
        fleet.config_path,
        tmp_path / "stderr.log",
        *("--webhook", receiver.url, "--hold", "1", "--resend", "1"),
    )
    try:
        up = "sglconsole_host_up"
        deadline = time.monotonic() + 40
        while "h200: connected" not in exporter.stderr():  # logged as the alerts first see it
            assert time.monotonic() < deadline, exporter.stderr()
            time.sleep(0.1)
        time.sleep(2)  # its server's first status is settled too: what comes now is news
        fleet.reboot("h200", down_for=6)  # every process of the host killed; back after 6 s
        wait_metrics(exporter, lambda s: value(s, up, host="h200") == 1, 60, "h200 back")
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and not any(
            a["labels"].get("alertname") == "SglconsoleUnreachable"
            and parse_time(a["endsAt"]) <= when
            for when, a in receiver.alerts()
        ):
            time.sleep(0.2)
        code = exporter.stop()
    finally:
        receiver.close()
        exporter.stop()
    assert code == 0, exporter.stderr()
    log = exporter.stderr()
    host_alerts = [
        (when, a)
        for when, a in receiver.alerts()
        if a["labels"]["alertname"] == "SglconsoleUnreachable"
    ]
    assert host_alerts, (receiver.posts, log)
    for _, alert in host_alerts:
        assert alert["labels"] == {
            "alertname": "SglconsoleUnreachable",
            "severity": "critical",
            "status": "UNREACHABLE",
            "host": "h200",
            "source": "sglconsole",
        }
        assert alert["annotations"]["summary"] == "h200 is UNREACHABLE (was UP)"
        assert alert["annotations"]["description"]  # why: the connection's error
        assert parse_time(alert["startsAt"]) <= parse_time(alert["endsAt"])
    firing = [(w, a) for w, a in host_alerts if parse_time(a["endsAt"]) > w]
    resolved = [(w, a) for w, a in host_alerts if parse_time(a["endsAt"]) <= w]
    assert len(firing) >= 2, host_alerts  # fired, then sent again while it lasted (--resend 1)
    assert len(resolved) == 1 and resolved[0][0] > firing[-1][0], host_alerts
    assert {a["startsAt"] for _, a in host_alerts} == {host_alerts[0][1]["startsAt"]}
    # the same news through hosts.yaml's alert_command, as the console sends it
    told = [json.loads(line) for line in events.read_text().splitlines()]
    host_events = [e for e in told if e["host"] == "h200" and e["port"] is None]
    assert [(e["event"], e["from"], e["to"]) for e in host_events] == [
        ("problem", "UP", "UNREACHABLE"),
        ("recovered", "UNREACHABLE", "UP"),
    ], told
    assert "alert problem: h200 UP -> UNREACHABLE" in log and "h200: unreachable:" in log


def test_sigterm_stops_within_the_budget_even_when_an_alert_command_hangs(tmp_path):
    """A stuck part of stopping (here an alert_command that never ends) is named in the log and
    cut short, its process killed: the exporter is gone within --stop-timeout, not systemd's."""
    pid_file = tmp_path / "alert.pid"
    hang = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(300)"
    with socket.socket() as closed:  # a loopback port nothing listens on: UNREACHABLE at once
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    hosts = {"gone": {"address": "127.0.0.1", "port": port, "known_hosts": "none"}}
    config_path = tmp_path / "hosts.yaml"
    config_path.write_text(
        yaml.safe_dump(
            {"alert_command": [sys.executable, "-c", hang, str(pid_file)], "hosts": hosts}
        )
    )
    exporter = Exporter(config_path, tmp_path / "stderr.log", "--hold", "0", "--stop-timeout", "1")
    try:
        deadline = time.monotonic() + 30
        while not (pid_file.exists() and pid_file.read_text()):
            assert time.monotonic() < deadline, exporter.stderr()
            time.sleep(0.1)
        alert_pid = int(pid_file.read_text())
        began = time.monotonic()
        code = exporter.stop()
        took = time.monotonic() - began
    finally:
        exporter.stop()
    log = exporter.stderr()
    assert code == 0, log
    assert "stopping: alert_command runs still going after 1s: cut short" in log, log
    assert took < 8, (took, log)  # 1 s of budget, 1 s to end cancelled, the interpreter's exit
    deadline = time.monotonic() + 5
    while pid_alive(alert_pid):
        assert time.monotonic() < deadline, f"the alert_command {alert_pid} outlived the exporter"
        time.sleep(0.1)


# -------------------------------------------------------------- Prometheus


def test_example_rules_pass_promtool():
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip(NO_PROMETHEUS)
    result = subprocess.run(
        [promtool, "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 15 rules found" in result.stdout
    names = re.findall(r"- alert: (\w+)", RULES.read_text())
    statuses = ("Slow", "Looping", "Down", "Drift", "Unreachable")
    canary = ("CanarySilent", "CanaryFailing", "CanaryChanged", "KvCanaryViolations", "NanLogits")
    canary += ("RouterCanaryFailing",)
    signs = ("HostMemory", "OomKill", "GpuXid", "GpuEcc")  # before an outage (precursors)
    assert sorted(names) == sorted(f"Sglconsole{s}" for s in (*statuses, *canary, *signs))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def prometheus(demo_exporter, tmp_path):
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.skip(NO_PROMETHEUS)
    target = demo_exporter.url.removeprefix("http://")
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
        f"rule_files: [{json.dumps(str(RULES))}]\n"
        "scrape_configs:\n"
        "  - job_name: sglconsole\n"
        f"    static_configs: [{{targets: [{json.dumps(target)}]}}]\n"
    )
    port = free_port()
    log = tmp_path / "prometheus.log"
    process = subprocess.Popen(
        [
            binary,
            f"--config.file={config}",
            f"--storage.tsdb.path={tmp_path / 'data'}",
            f"--web.listen-address=127.0.0.1:{port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=log.open("w"),
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, log.read_text()
            try:
                if httpx.get(url + "/-/ready", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def query(url: str, promql: str) -> list[dict]:
    reply = httpx.get(url + "/api/v1/query", params={"query": promql}, timeout=10).json()
    assert reply["status"] == "success", reply
    return reply["data"]["result"]


def test_a_real_prometheus_scrapes_the_exporter(demo_exporter, prometheus):
    wait_metrics(demo_exporter, demo_story, 60, "the demo story")
    slow = 'sglconsole_server_status{status="SLOW",host="ct129",port="30000"} == 1'
    looping = 'sglconsole_server_status{status="LOOPING",host="old059",port="30000"} == 1'
    began = time.monotonic()
    deadline = began + 60
    while time.monotonic() < deadline:
        if query(prometheus, slow) and query(prometheus, looping):
            break
        time.sleep(0.5)
    else:
        raise AssertionError(query(prometheus, "sglconsole_server_status == 1"))
    (target,) = httpx.get(prometheus + "/api/v1/targets", timeout=10).json()["data"][
        "activeTargets"
    ]
    assert target["health"] == "up", target
    print(
        f"\nPrometheus saw SLOW and LOOPING {time.monotonic() - began:.1f} s after it was ready; "
        f"its last scrape took {target['lastScrapeDuration'] * 1000:.1f} ms"
    )
    (series,) = query(prometheus, slow)
    assert series["metric"]["profile"] == "qwen27b-tp2-mtp" and series["value"][1] == "1"
    # the example rules match what the exporter serves: pending (or firing) for the demo's story
    deadline = time.monotonic() + 30
    wanted = {
        ("SglconsoleSlow", "ct129", "30000"),
        ("SglconsoleLooping", "old059", "30000"),
        ("SglconsoleDown", "h200x4", "30003"),
        ("SglconsoleDrift", "ct129", "30000"),
    }
    while True:
        alerts = httpx.get(prometheus + "/api/v1/alerts", timeout=10).json()["data"]["alerts"]
        seen = {
            (a["labels"]["alertname"], a["labels"]["host"], a["labels"]["port"]) for a in alerts
        }
        if wanted <= seen or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert wanted <= seen, alerts
    assert not any(a["labels"]["alertname"] == "SglconsoleUnreachable" for a in alerts), alerts
    rules = httpx.get(prometheus + "/api/v1/rules", timeout=10).json()["data"]["groups"]
    assert all(r["health"] == "ok" for g in rules for r in g["rules"]), rules


# ---------------------------------------------------------- in the process


async def test_a_probe_verdict_is_shown_for_the_process_it_judged(demo_fleet):
    cfg = config.load(demo_fleet.config_path)
    async with ExporterService(cfg, listen=("127.0.0.1", 0)) as exporter:
        base = f"http://127.0.0.1:{exporter.address[1]}"
        server = exporter.fleet.server("h200x4", 30001)
        deadline = time.monotonic() + 30
        while server.process is None:
            assert time.monotonic() < deadline, "h200x4:30001 never seen running"
            await asyncio.sleep(0.1)
        labels = {"host": "h200x4", "port": "30001"}
        pid = server.process.main.pid
        async with httpx.AsyncClient() as client:

            async def scrape() -> dict:
                text = (await client.get(base + "/metrics")).text
                return {f.name: f.samples for f in text_string_to_metric_families(text)}

            # what the console keeps after a probe (tui.operations.keep_probe)
            server.probe = ProbeResult("DEGENERATE", "loops", pid=pid)
            samples = await scrape()
            verdicts = {
                s.labels["verdict"]: s.value
                for s in samples["sglconsole_server_probe_verdict"]
                if labels.items() <= s.labels.items()
            }
            assert verdicts == {"OK": 0, "WRONG": 0, "DEGENERATE": 1, "SLOW": 0, "ERROR": 0}
            server.probe = ProbeResult("OK", "fine", pid=pid + 1)  # another process's verdict
            assert value(await scrape(), "sglconsole_server_probe_verdict", **labels) is None
            # OpenMetrics for whoever asks for it; HEAD has no body
            reply = await client.get(
                base + "/metrics", headers={"Accept": "application/openmetrics-text"}
            )
            assert reply.headers["content-type"].startswith("application/openmetrics-text")
            assert reply.text.endswith("# EOF\n")
            head = await client.head(base + "/status")
            assert head.status_code == 200 and head.content == b""
            assert int(head.headers["content-length"]) > 100


def test_mistakes_are_usage_errors(demo_fleet):
    path = str(demo_fleet.config_path)
    bad = cli("exporter", "-c", path, "--listen", "9464")
    assert bad.returncode == 2 and "expected HOST:PORT" in bad.stderr, bad.stderr
    bad = cli("exporter", "-c", path, "--webhook", "alertmanager:9093")
    assert bad.returncode == 2 and "expected an http(s) URL" in bad.stderr, bad.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        bad = cli("exporter", "-c", path, "--listen", f"127.0.0.1:{port}")
    assert bad.returncode == 2 and f"127.0.0.1:{port}" in bad.stderr, bad.stderr
    assert "in use" in bad.stderr, bad.stderr


def prometheus_config(demo_exporter, prometheus: str, demo_fleet) -> dict:
    """The demo's hosts.yaml reading from Prometheus, once it has the demo's story; no host can
    be reached over SSH, so what a console shows of them came from Prometheus."""
    wait_metrics(demo_exporter, demo_story, 60, "the demo story")
    slow = 'sglconsole_server_status{status="SLOW",host="ct129",port="30000"} == 1'
    deadline = time.monotonic() + 60
    while not query(prometheus, slow):
        assert time.monotonic() < deadline, "Prometheus never saw ct129 SLOW"
        time.sleep(0.5)
    document = yaml.safe_load(demo_fleet.config_path.read_text())
    for host in document["hosts"].values():
        host["address"], host["port"] = "127.0.0.1", free_port()
    document["source"] = {"prometheus": prometheus, "interval": 1}
    return document


def test_the_console_reads_the_fleet_from_prometheus(
    demo_exporter, prometheus, demo_fleet, tmp_path
):
    document = prometheus_config(demo_exporter, prometheus, demo_fleet)
    path = tmp_path / "hosts.yaml"
    path.write_text(yaml.safe_dump(document))
    began = time.monotonic()
    result = cli("status", "-c", str(path), "--json", "--timeout", "20")
    took = time.monotonic() - began
    assert result.returncode == 1, result.stderr  # not every configured server is UP
    hosts = json.loads(result.stdout)["hosts"]
    statuses = {(name, s["port"]): s["status"] for name, h in hosts.items() for s in h["servers"]}
    assert statuses[("ct129", 30000)] == "SLOW" and statuses[("old059", 30000)] == "LOOPING"
    assert statuses[("h200x4", 30003)] == "DOWN" and statuses[("h200x4", 30000)] == "UP"
    ct129 = hosts["ct129"]
    assert ct129["reachable"] is True and ct129["error"] is None
    assert [g["name"] for g in ct129["gpus"]] == ["NVIDIA RTX A6000"] * 2
    assert ct129["gpus"][0]["mem_total_mib"] == 49140
    (server,) = ct129["servers"]
    assert 25 < server["tok_s"] < 45 and server["drift"] is True and server["drift_count"] > 0
    assert server["load_source"] == "prometheus" and "Prometheus" in server["reason"]
    print(f"\nstatus --json from Prometheus: {took:.1f} s (the whole CLI)")
    # Prometheus away: every server UNKNOWN, and the reason says where it looked
    document["source"] = {"prometheus": f"http://127.0.0.1:{free_port()}"}
    path.write_text(yaml.safe_dump(document))
    away = json.loads(cli("status", "-c", str(path), "--json").stdout)["hosts"]["ct129"]
    assert (
        away["servers"][0]["status"] == "UNKNOWN"
        and "prometheus http://127.0.0.1" in (away["servers"][0]["reason"])
    )


async def test_the_console_opens_on_prometheus(demo_exporter, prometheus, demo_fleet, tmp_path):
    from sglconsole.state.fleet import Status
    from sglconsole.tui.app import make_app
    from tests.tui.helpers import shown, until

    path = tmp_path / "hosts.yaml"
    path.write_text(yaml.safe_dump(prometheus_config(demo_exporter, prometheus, demo_fleet)))
    app = make_app(config.load(path))
    async with app.run_test(size=(160, 48)) as pilot:
        fleet = app.session.fleet
        await until(
            pilot,
            lambda: (
                fleet.server("ct129", 30000).status == Status.SLOW
                and fleet.server("old059", 30000).status == Status.LOOPING
            ),
            20,
            "the demo's story from Prometheus",
        )
        await pilot.press("n")
        await until(pilot, lambda: app.main.selected is not None, 5, "n to select a problem")
        header = shown(app, "#server-header")
        assert any(word in header for word in ("SLOW", "LOOPING", "DOWN")), header
        assert "Prometheus" in header, header
        assert fleet.hosts["ct129"].reachable is True  # though no SSH reaches it
