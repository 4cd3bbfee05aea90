"""A console reading SGLang's own series from a real Prometheus (Debian's package) that scrapes
the simulated servers' /metrics at "host address:port", as a plain `static_configs` scrape of a
fleet does; no `sglconsole exporter` anywhere, and no SSH for the console (its hosts' SSH ports
lead nowhere)."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
import yaml

from sglconsole import config
from sglconsole.remote.monitor import FleetMonitor
from sglconsole.state.model import Status
from tests.cli import cli
from tests.prometheus import Forwards, Prometheus, free_port

pytestmark = pytest.mark.slow

UNCONFIGURED = 31001  # h200x4's server on 30001, also reachable here: a port hosts.yaml lacks
METRICS_ON = 4  # h200x4's three running servers (--enable-metrics) and UNCONFIGURED
BUSY = (("h200x4", 30000), ("h200x4", 30001), ("h200x4", UNCONFIGURED))
READINGS = 8  # status runs until every busy server was seen running a request


@pytest.fixture(scope="module")
def scraped(demo_fleet, tmp_path_factory):
    """Forwards to every configured server (h200x4:30003 runs nothing) and one unconfigured."""
    cfg = config.load(demo_fleet.config_path)
    forwards = Forwards(cfg)
    targets = [forwards.open(h, s.port) for h, host in cfg.hosts.items() for s in host.servers]
    targets.append(forwards.open("h200x4", 30001, outside=UNCONFIGURED))
    targets.append(forwards.dcgm("h200x4"))  # GPUs: dcgm-exporter on one host
    host = demo_fleet.hosts["h200x4"]
    wait(lambda: host.pids("dcgm-exporter"), "dcgm-exporter to start")  # the check below can fail
    yield cfg, forwards, targets
    forwards.stop()
    # the shared demo is left as it was: no dcgm-exporter
    wait(lambda: not host.pids("dcgm-exporter"), "dcgm-exporter to end with its connection")


def wait(predicate, what: str, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.2)


def start(tmp_path, targets: list[str]) -> Prometheus:
    prometheus = Prometheus(tmp_path / "prometheus", {"sglang": targets})
    deadline = time.monotonic() + 30  # two scrapes of every target: irate has its two samples
    while len(prometheus.query("irate(sglang:generation_tokens_total[1m])")) < METRICS_ON:
        assert time.monotonic() < deadline, prometheus.query("up")
        time.sleep(0.5)
    return prometheus


def console_config(demo_fleet, url: str, path) -> None:
    document = yaml.safe_load(demo_fleet.config_path.read_text())
    for host in document["hosts"].values():
        host["port"] = free_port()  # no SSH reaches them: all the console shows is Prometheus's
    document["source"] = {"prometheus": url, "interval": 1}
    path.write_text(yaml.safe_dump(document))


def test_status_shows_sglang_series_from_prometheus(demo_fleet, scraped, tmp_path):
    _, _, targets = scraped
    prometheus = start(tmp_path, targets)
    try:
        path = tmp_path / "hosts.yaml"
        console_config(demo_fleet, prometheus.url, path)
        # the demo's background load is two requests with gaps: one reading may fall between them
        # (0 running, rightly); each busy server must show its running requests in some reading
        running_seen: dict[tuple, int] = {}
        scraped_reading: dict[tuple, dict] = {}  # each busy server's last reading Prometheus had
        for _ in range(READINGS):
            result = cli("status", "-c", str(path), "--json", "--timeout", "20")
            assert result.returncode == 1, result.stderr  # h200x4:30003 is DOWN
            hosts = json.loads(result.stdout)["hosts"]
            servers = {(n, s["port"]): s for n, h in hosts.items() for s in h["servers"]}
            for key in BUSY:
                server = servers.get(key)
                if server is None:  # an unconfigured server whose scrape failed: not listed
                    continue
                if server["status"] == "DOWN" and "cannot scrape" in server["reason"]:
                    # Prometheus's last scrape failed (1 s, over an SSH forward, on a loaded
                    # machine): said, and its numbers unknown, not zero
                    assert server["running_req"] is None and server["tok_s"] is None, server
                    continue
                running = server["running_req"]
                if running is None:
                    # nothing generated between its last two scrapes (a gap in the demo's load,
                    # longer on a loaded machine): SGLang's gauges are frozen then, so unknown
                    # (state.server_view), and its tok/s says so
                    assert not server["tok_s"], server
                    continue
                running_seen[key] = max(running_seen.get(key, 0), running)
                scraped_reading[key] = server
            if all(running_seen.get(key, 0) >= 1 for key in BUSY):
                break
    finally:
        prometheus.stop()
    assert all(running_seen.get(key, 0) >= 1 for key in BUSY), running_seen
    for key in BUSY:
        server = scraped_reading[key]
        assert server["status"] == ("UP" if server["managed"] else "UNMANAGED"), server
        assert server["tok_s"] > 0 and server["load_source"] == "prometheus", server
        assert server["accept_len"] is not None, server
        assert server["queue_req"] is not None and server["pid"] is None, server
        assert server["metrics"]["generation_tokens_total"] > 0, server
        assert server["stale_s"] is None
    # nothing listens on h200x4:30003; ct129's and old059's servers run without --enable-metrics
    for key in (("h200x4", 30003), ("ct129", 30000), ("old059", 30000)):
        down = servers[key]
        assert down["status"] == "DOWN" and "cannot scrape" in down["reason"], down
    h200 = hosts["h200x4"]
    assert h200["reachable"] is True and h200["error"] is None
    assert any("Prometheus" in note for note in h200["notes"]), h200["notes"]
    # GPUs from dcgm-exporter (same scrape job: Prometheus's `up` for port 9400 is no server)
    gpus = h200["gpus"]
    assert [g["index"] for g in gpus] == [0, 1, 2, 3] and "H200" in gpus[0]["name"], gpus
    assert gpus[0]["mem_used_mib"] > 100_000 and gpus[0]["mem_total_mib"] > 140_000, gpus
    assert 0 <= gpus[0]["util"] <= 100 and gpus[0]["temperature_c"] > 20, gpus
    assert gpus[0]["power_w"] > 50 and gpus[3]["mem_used_mib"] < 1000, gpus  # GPU 3: no server
    assert hosts["ct129"]["gpus"] == []  # no dcgm-exporter there
    assert 9400 not in {s["port"] for s in h200["servers"]}


async def test_changes_show_and_prometheus_away_is_stale(demo_fleet, scraped, tmp_path):
    cfg, forwards, targets = scraped
    key = f"{cfg.host('h200x4').address}:30002"
    prometheus = await asyncio.to_thread(start, tmp_path, targets)
    path = tmp_path / "hosts.yaml"
    console_config(demo_fleet, prometheus.url, path)
    try:
        async with FleetMonitor(config.load(path)) as monitor:
            fleet = monitor.state
            server = fleet.server("h200x4", 30002)
            await until(lambda: server.status == Status.UP and server.view.tok_s, 20, "UP")
            began = time.monotonic()
            await asyncio.to_thread(forwards.close, key)
            await until(lambda: server.status == Status.DOWN, 20, "DOWN once its scrape fails")
            print(f"\nh200x4:30002 DOWN {time.monotonic() - began:.1f} s after it went away")
            await asyncio.to_thread(forwards.open, "h200x4", 30002)
            # UP at its first scrape back; tok/s (irate: two scrapes) one scrape later
            await until(lambda: server.status == Status.UP and server.view.tok_s, 20, "UP again")
            shown = server.view.tok_s
            await asyncio.to_thread(prometheus.stop)
            await until(lambda: server.view.stale_since is not None, 20, "stale")
            view = server.view
            assert view.status == Status.UNKNOWN and "unreachable" in view.reason, view
            assert "UP" in view.reason and view.tok_s is not None, view
            assert fleet.hosts["h200x4"].error.startswith(f"prometheus {prometheus.url}")
            assert shown is not None
    finally:
        await asyncio.to_thread(prometheus.stop)


async def until(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.2)


def test_the_exporter_wins_where_it_has_a_server(demo_fleet, scraped, tmp_path):
    """Prometheus scrapes SGLang's servers and `sglconsole exporter`: status and drift are the
    exporter's (it saw argv and logs); a server only SGLang's series show is derived from them."""
    from tests.e2e.test_exporter import Exporter, demo_story, wait_metrics

    _, _, targets = scraped
    exporter = Exporter(demo_fleet.config_path, tmp_path / "exporter.log")
    try:
        wait_metrics(exporter, demo_story, 90, "ct129 SLOW and drifted, old059 LOOPING")
        prometheus = Prometheus(
            tmp_path / "prometheus",
            {"sglang": targets, "sglconsole": [exporter.url.removeprefix("http://")]},
        )
        try:
            slow = 'sglconsole_server_status{status="SLOW",host="ct129"} == 1'
            looping = 'sglconsole_server_status{status="LOOPING",host="old059"} == 1'
            deadline = time.monotonic() + 30
            while (  # the whole story in Prometheus: both statuses and SGLang's own series
                not prometheus.query(slow)
                or not prometheus.query(looping)
                or len(prometheus.query("irate(sglang:generation_tokens_total[1m])")) < METRICS_ON
            ):
                assert time.monotonic() < deadline, "Prometheus has not both yet"
                time.sleep(0.5)
            path = tmp_path / "hosts.yaml"
            console_config(demo_fleet, prometheus.url, path)
            # a scrape that timed out on a loaded machine leaves a server's irate empty for a
            # reading (its tok/s unknown, rightly): the unconfigured one must show it in some
            for _ in range(5):
                result = cli("status", "-c", str(path), "--json", "--timeout", "20")
                hosts = json.loads(result.stdout)["hosts"]
                servers = {(n, s["port"]): s for n, h in hosts.items() for s in h["servers"]}
                if (servers.get(("h200x4", UNCONFIGURED)) or {}).get("tok_s"):
                    break
        finally:
            prometheus.stop()
    finally:
        exporter.stop()
    ct129 = servers[("ct129", 30000)]  # SGLang's series alone would say DOWN (no metrics)
    assert ct129["status"] == "SLOW" and ct129["drift"] is True, ct129
    assert servers[("old059", 30000)]["status"] == "LOOPING", servers[("old059", 30000)]["reason"]
    assert servers[("h200x4", 30001)]["status"] == "UP"
    assert servers[("h200x4", 30001)]["drift"] is False  # the exporter judged it
    extra = servers[("h200x4", UNCONFIGURED)]  # the exporter has no such server
    assert extra["status"] == "UNMANAGED" and (extra["tok_s"] or 0) > 0, extra
    assert [g["name"] for g in hosts["ct129"]["gpus"]] == ["NVIDIA RTX A6000"] * 2
