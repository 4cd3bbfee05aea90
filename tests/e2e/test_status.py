"""Monitoring end to end: the demo fleet over real SSH, seen by `status` and the monitor."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
import time

from sglconsole import config
from sglconsole.remote.monitor import FleetMonitor
from sglconsole.remote.ssh.connection import SshFleet
from sglconsole.state.fleet import Status
from tests.cli import cli


async def wait_for(predicate, timeout: float = 20.0, step: float = 0.1, state=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        await asyncio.sleep(step)
    seen = (
        {s.key: (s.status.value, s.reason, s.view.tok_s) for s in state.all_servers()}
        if state
        else ""
    )
    raise AssertionError(f"condition not met in time: {seen}")


def test_status_json_shows_the_demo_story(demo_fleet):
    result = cli("status", "-c", str(demo_fleet.config_path), "--json")
    assert result.returncode == 1, result.stderr  # not every configured server is UP
    hosts = json.loads(result.stdout)["hosts"]
    ct = hosts["ct129"]
    assert ct["reachable"] and len(ct["gpus"]) == 2 and ct["gpus"][0]["name"] == "NVIDIA RTX A6000"
    (server,) = ct["servers"]
    assert server["status"] in ("SLOW", "DRIFT", "STARTING"), (
        server
    )  # drifted and slow: which shows first is timing
    assert (
        server["argv"][1:3] == ["-m", "sglang.launch_server"]
        and "--speculative-algo" in server["argv"]
    )
    assert server["env"]["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert {c["title"] for c in server["children"]} >= {
        "sglang::scheduler_TP0",
        "sglang::scheduler_TP1",
        "sglang::detokenizer",
    }
    assert server["gpus"] == [0, 1]
    assert any("container sees host PIDs" in note for note in ct["notes"])
    h200 = {s["port"]: s for s in hosts["h200x4"]["servers"]}
    assert h200[30003]["status"] == "DOWN" and h200[30003]["pid"] is None
    assert [h200[p]["gpus"] for p in (30000, 30001, 30002)] == [[0], [1], [2]]
    assert len(hosts["h200x4"]["gpus"]) == 4


def test_status_table_and_exit_code(demo_fleet):
    result = cli("status", "-c", str(demo_fleet.config_path))
    assert result.returncode == 1
    for needle in ("ct129", "h200x4", "old059", "DOWN", "NVIDIA H200", "qwen8b-tp1"):
        assert needle in result.stdout, result.stdout


async def test_monitor_tracks_tok_s_and_statuses(demo_fleet):
    cfg = config.load(demo_fleet.config_path)
    async with FleetMonitor(cfg) as monitor:
        state = monitor.state
        slow = state.server("ct129", 30000)
        await wait_for(lambda: slow.status == Status.SLOW, timeout=30, state=state)
        assert 25 < slow.view.tok_s < 45, [
            s.gen_throughput for s in slow.history
        ]  # the drifted server: ~35 tok/s
        assert slow.history[-1].accept_len < 2.0
        up = state.server("h200x4", 30001)
        await wait_for(lambda: up.status == Status.UP, timeout=30, state=state)
        assert up.view.tok_s > 60  # two background requests on an H200: ~100 tok/s in aggregate
        looping = state.server("old059", 30000)
        await wait_for(lambda: looping.status == Status.LOOPING, timeout=40, state=state)
        assert state.server("h200x4", 30003).status == Status.DOWN
        h200 = state.hosts["h200x4"]
        await wait_for(lambda: h200.gpus, timeout=10)
        assert h200.gpus[0].mem_used_mib > 100_000, (h200.gpu_error, h200.error)


async def test_server_http_through_the_ssh_forward(demo_fleet):
    cfg = config.load(demo_fleet.config_path)
    fleet = SshFleet(cfg.hosts)
    try:
        forward = await fleet["h200x4"].forward(30000)
        assert stat.S_IMODE(os.stat(forward.socket).st_mode) == 0o600
        async with forward.client(timeout=10) as client:
            assert (await client.get("/health")).status_code == 200
            info = (await client.get("/server_info")).json()
            assert info["version"] == "0.5.23" and info["max_running_requests"] == 64
            metrics = (await client.get("/metrics")).text
            assert "sglang:num_running_reqs" in metrics
        # every host has its own port 30000: the same forward target reaches another server,
        # an older SGLang (0.5.9 already serves /server_info; its get_ name is the deprecated alias)
        other = await fleet["old059"].forward(30000)
        assert other.socket != forward.socket
        async with other.client(timeout=10) as client:
            assert (await client.get("/server_info")).json()["version"] == "0.5.9"
            assert (await client.get("/get_server_info")).json()["version"] == "0.5.9"
    finally:
        await fleet.close()


async def test_each_host_sees_only_its_own_processes(demo_fleet):
    cfg = config.load(demo_fleet.config_path)
    fleet = SshFleet(cfg.hosts)
    try:
        ps = await fleet["old059"].run(["ps", "-eo", "args"])
        assert "sglang::scheduler_TP1" not in ps.stdout  # ct129's TP=2 server is elsewhere
        assert ps.stdout.count("sglang.launch_server") == 1
    finally:
        await fleet.close()


async def test_metrics_page_is_read_where_the_server_has_one(demo_fleet):
    cfg = config.load(demo_fleet.config_path)
    async with FleetMonitor(cfg) as monitor:
        state = monitor.state
        with_metrics = state.server("h200x4", 30001)  # launched with --enable-metrics
        # two background requests; a page read between one's end and the next's start says 1 (a
        # page read before the load began, on a loaded machine, says 0: the next one counts)
        busy = await wait_for(
            lambda: with_metrics.metrics and with_metrics.metrics.running_req in (1, 2),
            timeout=30,
            state=state,
        )
        assert busy and with_metrics.metrics.max_total_tokens > 0, with_metrics.metrics
        # the page and the decode lines describe the same server: the same order of tok/s
        await wait_for(lambda: with_metrics.history, timeout=30, state=state)
        await wait_for(lambda: with_metrics.metrics.gen_throughput, timeout=30, state=state)
        await wait_for(lambda: with_metrics.view.tok_s, timeout=30, state=state)  # 2+ lines
        assert 0.3 < with_metrics.metrics.gen_throughput / with_metrics.view.tok_s < 3
        without = state.server(
            "ct129", 30000
        )  # no --enable-metrics: a 404, remembered, never parsed
        await wait_for(lambda: without.health == "ok", timeout=30, state=state)
        session = monitor.monitors["ct129"]
        await wait_for(lambda: 30000 in session.http.no_metrics, timeout=15, state=state)
        assert without.metrics is None


def test_status_json_carries_the_metrics_page(demo_fleet):
    result = cli("status", "-c", str(demo_fleet.config_path), "--json")
    h200 = {s["port"]: s for s in json.loads(result.stdout)["hosts"]["h200x4"]["servers"]}
    # the page's own figures: two background requests (a page read between one's end and the
    # next's start says 1, or 0 on a loaded machine: a one-shot reads one page) and the pool
    metrics = h200[30000]["metrics"]
    assert metrics["running_req"] in (0, 1, 2) and metrics["max_total_tokens"] > 0, h200[30000]
    assert h200[30000]["load_source"] == "log" or h200[30000]["load_source"] == "metrics"


def test_a_server_started_with_the_sglang_serve_cli_is_found_compared_and_killed(
    fleet_factory, tmp_path, monkeypatch
):
    from sglconsole.sim.fleet.scenarios import QWEN8B
    from sglconsole.sim.fleet.start import HostSpec, ServerSpec

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    host = HostSpec(
        name="serve1",
        gpu_model="H200",
        gpu_count=1,
        models=("Qwen3-8B",),
        sglang={"startup_s": 0.5, "load": {"concurrency": 1, "max_tokens": 200}},
        servers=[ServerSpec(30000, "qwen8b-tp1", [0], running=QWEN8B, entry="serve")],
    )
    path = str(fleet_factory([host]).config_path)
    deadline = time.monotonic() + 40
    while True:
        (server,) = json.loads(cli("status", "-c", path, "--json").stdout)["hosts"]["serve1"][
            "servers"
        ]
        if server["health"] == "ok" or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert server["managed"] and server["profile"] == "qwen8b-tp1" and server["health"] == "ok", (
        server
    )
    assert server["argv"][1].endswith("/bin/sglang") and server["argv"][2] == "serve", server[
        "argv"
    ]
    assert server["gpus"] == [0]
    assert (
        cli("diff", "-c", path, "serve1:30000").returncode == 0
    )  # the flags after `serve` are the profile's
    killed = cli("kill", "-c", path, "serve1:30000", "--yes")
    assert killed.returncode == 0 and "port 30000 free" in killed.stdout, (
        killed.stdout + killed.stderr
    )
    (server,) = json.loads(cli("status", "-c", path, "--json").stdout)["hosts"]["serve1"]["servers"]
    assert server["status"] == "DOWN"


def test_piped_tables_keep_their_width_and_speak_words(demo_fleet):
    """Into a pipe, rich cut tables to 80 columns (flag names wrapped mid-word) and the diff
    showed enum names (DEFAULTED_DIFFERENTLY)."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    result = subprocess.run(
        [sys.executable, "-m", "sglconsole", "diff", "-c", str(demo_fleet.config_path), "ct129"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    out = result.stdout
    assert "speculative-num-draft-tokens" in out  # one piece, not wrapped
    assert "DEFAULTED_DIFFERENTLY" not in out and "ONLY_RUNNING" not in out
    assert "differs" in out


def test_status_of_some_hosts_only(demo_fleet):
    path = str(demo_fleet.config_path)
    one = cli("status", "-c", path, "h200x4", "--json")
    assert set(json.loads(one.stdout)["hosts"]) == {"h200x4"}, one.stdout[-500:]
    unknown = cli("status", "-c", path, "h200x5")
    assert unknown.returncode == 2 and "unknown host 'h200x5'" in unknown.stderr
    assert "h200x4" in unknown.stderr  # the known ones are listed


async def test_a_busy_server_is_asked_its_load_once_an_interval_not_at_every_batch_line(
    demo_fleet,
):
    # the HTTP feed asks a quiet server at once when its log shows work; a busy one (a decode
    # line a second) keeps its 5 s turn: asked at every line, 64 busy servers cost 7x the CPU
    log = demo_fleet.hosts["h200x4"].root / "logs" / "sglang-30001.log"
    cfg = config.load(demo_fleet.config_path)
    async with FleetMonitor(cfg) as monitor:
        busy = monitor.state.server("h200x4", 30001)
        await wait_for(lambda: busy.load is not None and busy.load.in_flight, timeout=30)
        await asyncio.sleep(3)  # past the first polls and the server's first check
        offset = log.stat().st_size
        await asyncio.sleep(21)
        with log.open("rb") as file:
            file.seek(offset)
            asked = file.read().decode(errors="replace").count('"GET /v1/loads HTTP/1.1"')
    assert 3 <= asked <= 6, f"{asked} load polls in 21 s of a busy server (every 5 s: ~4)"
