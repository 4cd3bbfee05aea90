"""The console's version-sensitive paths against the oldest, a middle and the newest SGLang release
the simulator serves from its tables (0.5.9, 0.5.17, 0.5.23): load, drain, probe, drift,
preflight, startup milestones; and what only newer releases have: the weight-cache daemon and the
Rust server mode (0.5.17+). One simulated host per release, over real SSH, shared by the module:
only the last test changes a host (it kills 0.5.23's second server)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time

import pytest

from sglconsole import config
from sglconsole.actions import ActionContext
from sglconsole.actions.audit import AuditLog, RollbackStore
from sglconsole.actions.kill import kill, plan_kill
from sglconsole.actions.preflight import run_preflight
from sglconsole.actions.probe import probe
from sglconsole.actions.routing import drain
from sglconsole.config.launch_spec import launch_spec
from sglconsole.core.sglang_log import parse_line
from sglconsole.core.sglang_log.events import MILESTONES
from sglconsole.remote.drift import diff_server
from sglconsole.remote.inspect import snapshot
from sglconsole.remote.load_reader import load_of
from sglconsole.remote.monitor import FleetMonitor
from sglconsole.remote.ssh.connection import SshFleet
from sglconsole.sim import gpustate
from sglconsole.sim.fleet.start import HostSpec, ServerSpec, SimFleet
from tests.cli import cli
from tests.fleets import SSH_MODE

VERSIONS = ("0.5.9", "0.5.17", "0.5.23")
ARGS = [
    "--model-path", "{models}/Qwen3-8B", "--host", "0.0.0.0", "--tp-size", "1",
    "--mem-fraction-static", "0.8", "--max-running-requests", "2", "--decode-log-interval", "40",
]  # fmt: skip
RUNNING = [a if a != "40" else "20" for a in ARGS]  # started by hand with one flag changed: drift
CLIENT = [*ARGS, "--weight-cache-mode", "client", "--port", "30001"]
RUST = {"SGLANG_RUST_SERVER": "1"}
REFUSED = {  # a flag each release's parser refuses, and the words it refuses it with
    "0.5.9": (["--weight-cache-mode", "client"], "unrecognized arguments: --weight-cache-mode"),
    "0.5.17": (["--enable-nan-detection"], "unrecognized arguments: --enable-nan-detection"),
    "0.5.23": (
        ["--cuda-graph-max-bs", "8"],
        "ambiguous option: --cuda-graph-max-bs could match --cuda-graph-max-bs-decode",
    ),
}
DIST_INIT = {"0.5.9": "Init torch distributed", "0.5.17": "Init torch distributed"}


def name(version: str) -> str:
    return "r" + version.replace(".", "")


def spec(version: str) -> HostSpec:
    """Three requests kept running against two slots: two run, one waits, all the time."""
    servers = [ServerSpec(30000, "matrix", [0], running=RUNNING)]
    sglang = {"startup_s": 0.5, "load": {"concurrency": 3, "max_tokens": 300, "pause_s": 0.05}}
    extra = {}
    if version == "0.5.23":  # a Rust-mode server that loads from a standalone weight cache
        servers.append(ServerSpec(30001, "matrix-client", [1], running=CLIENT, running_env=RUST))
        sglang["ports"] = {"30001": {"load": {"concurrency": 0}}}
        extra["weight_cache"] = {"model": "Qwen3-8B", "gpus": [1], "tp": 1}
    return HostSpec(
        name(version),
        gpu_count=2 if version == "0.5.23" else 1,
        sglang_version=version,
        sglang=sglang,
        servers=servers,
        **extra,
    )


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    profiles = {
        "matrix": {"args": ARGS, "startup_timeout": 60},
        "matrix-client": {"args": CLIENT[:-2], "env": RUST, "startup_timeout": 60},
    }
    fleet = SimFleet(
        tmp_path_factory.mktemp("matrix"), [spec(v) for v in VERSIONS], profiles, ssh=SSH_MODE
    )
    fleet.start()
    try:
        fleet.wait_ready()
        yield fleet
    finally:
        fleet.stop()


def on_fleet(matrix: SimFleet, work):
    """Run `work(cfg, ssh)` with the console's own SSH connections to the fleet."""

    async def go():
        cfg = config.load(matrix.config_path)
        fleet = SshFleet(cfg.hosts)
        try:
            return await work(cfg, fleet)
        finally:
            await fleet.close()

    return asyncio.run(go())


def log_of(matrix: SimFleet, version: str, port: int = 30000) -> str:
    return (matrix.hosts[name(version)].root / "logs" / f"sglang-{port}.log").read_text()


@pytest.mark.parametrize("version", VERSIONS)
def test_load_reads_running_and_queued_and_unreadable_is_unknown(matrix, version):
    host = matrix.hosts[name(version)]

    async def work(cfg, fleet):
        endpoint = await fleet[host.spec.name].forward(30000)
        deadline = time.monotonic() + 20
        while True:
            answer = await load_of(endpoint)
            load = answer.load
            if load is not None and load.running == 2 and load.waiting >= 1:
                break
            assert time.monotonic() < deadline, answer
            await asyncio.sleep(0.2)
        settings = gpustate.load_host(host.root)["sglang"]
        gpustate.write_host(host.root, sglang={**settings, "http": "wrong_json"})
        try:
            await asyncio.sleep(0.7)  # the simulated server re-reads its faults twice a second
            return await load_of(endpoint)
        finally:
            gpustate.write_host(host.root, sglang=settings)

    broken = on_fleet(matrix, work)
    assert broken.load is None and broken.answered and broken.why, broken


@pytest.mark.parametrize("version", VERSIONS)
def test_drain_waits_while_requests_run(matrix, version, tmp_path):
    async def work(cfg, fleet):
        ctx = ActionContext(cfg, fleet)
        began = time.monotonic()
        await drain(ctx, AuditLog(tmp_path / "actions.jsonl"), name(version), 30000, timeout=2)
        return ctx.stages[-1], time.monotonic() - began

    stage, took = on_fleet(matrix, work)
    assert took >= 2 and "still running after 2s: cut" in stage.detail, stage


@pytest.mark.parametrize("version", VERSIONS)
def test_probe_answers(matrix, version):
    async def work(cfg, fleet):
        ctx = ActionContext(cfg, fleet)
        return await probe(ctx, name(version), 30000, throughput=False, speed=False)

    result = on_fleet(matrix, work)
    verdict = result.data["probe"]
    assert verdict.verdict == "OK" and verdict.answer.strip() == "4", verdict


@pytest.mark.parametrize("version", VERSIONS)
def test_drift_names_the_flag_changed_by_hand(matrix, version):
    async def work(cfg, fleet):
        host = name(version)
        report, _, _ = await diff_server(cfg, host, 30000, fleet[host])
        return report

    report = on_fleet(matrix, work)
    assert report.version == version
    assert [(r.name, r.profile, r.running) for r in report.differences] == [
        ("decode_log_interval", 40, 20)
    ], report.summary


@pytest.mark.parametrize("version", VERSIONS)
def test_preflight_refuses_what_the_release_refuses_in_its_words(matrix, version):
    extra, words = REFUSED[version]

    async def work(cfg, fleet):
        host = name(version)
        spec = launch_spec(cfg, host, 30000)
        asked = dataclasses.replace(spec, argv=(*spec.argv, *extra))
        snap = await snapshot(fleet[host], cfg.host(host).python)
        return await run_preflight(fleet[host], asked, snap)

    result = on_fleet(matrix, work)
    [failed] = result.failures()
    assert failed.name == "arguments" and words in failed.detail, result.lines()


@pytest.mark.parametrize("version", VERSIONS)
def test_startup_milestones_in_the_release_wording(matrix, version):
    """0.5.21 renamed 'Init torch distributed begin.' to 'Init parallel begin.'; 0.5.17 writes
    'KV Cache is allocated. dtype: ...' and 'Capture ... CUDA graph begin. backend=...'."""
    records = [r for r in map(parse_line, log_of(matrix, version).splitlines()) if r]
    milestones = [r for r in records if r.kind == "milestone"]
    seen = [r.milestone for r in milestones]
    for wanted in ("dist_init_begin", "dist_init_end", "weights_begin", "weights_loaded"):
        assert wanted in seen, (wanted, seen)
    for wanted in ("kv_cache", "memory_pool_end", "cuda_graph_begin", "cuda_graph_end"):
        assert wanted in seen, (wanted, seen)
    first = {}
    for record in milestones:
        first.setdefault(record.milestone, record)
    order = [m for m in MILESTONES if m in first]
    assert sorted(order, key=lambda m: seen.index(m)) == order  # in SGLang's order
    begin = first["dist_init_begin"].message
    assert begin.startswith(DIST_INIT.get(version, "Init parallel")), begin
    assert first["dist_init_end"].extra["elapsed"] > 0
    assert first["kv_cache"].extra["k_size"] > 0 and first["kv_cache"].extra["tokens"] > 0
    assert any(r.kind == "ready" for r in records)


def test_the_monitor_asks_nothing_deprecated(matrix):
    """SGLang logs a warning for every call of a deprecated alias (/get_load, /get_server_info,
    /get_model_info on 0.5.9-0.5.17, as the real 0.5.12's log shows): a console polling one
    fills the server's own log."""

    async def watch():
        cfg = config.load(matrix.config_path)
        async with FleetMonitor(cfg) as monitor:
            state = monitor.state
            servers = [state.server(name(v), 30000) for v in VERSIONS]
            deadline = time.monotonic() + 30
            while not all(s is not None and s.load is not None for s in servers):
                assert time.monotonic() < deadline, "the monitor read no load"
                await asyncio.sleep(0.2)
                servers = [state.server(name(v), 30000) for v in VERSIONS]
            await asyncio.sleep(6)  # several polling rounds more

    asyncio.run(watch())
    for version in VERSIONS:
        said = [line for line in log_of(matrix, version).splitlines() if "is deprecated" in line]
        assert not said, (version, said[:3])


def test_a_weight_cache_daemon_holds_memory_by_design_and_a_rust_server_has_no_detokenizer(
    matrix,
):
    host = name("0.5.23")

    async def work(cfg, fleet):
        snap = await snapshot(fleet[host], cfg.host(host).python)
        endpoint = await fleet[host].forward(30001)
        async with endpoint.client(timeout=10) as client:
            info = (await client.get("/server_info")).json()
        return snap, info

    snap, info = on_fleet(matrix, work)
    status = cli("status", "-c", str(matrix.config_path), "--json")
    shown = json.loads(status.stdout)["hosts"][host]
    text = cli("status", "-c", str(matrix.config_path)).stdout
    # before: "GPU memory held by pid N (python3, 16896 MiB) that no server accounts for"
    assert shown["unaccounted_gpu_pids"] == [] and shown["orphans"] == [], shown
    assert "no server accounts for" not in text and "by design" in text, text
    assert {s["port"]: s["status"] for s in shown["servers"]}[30001] == "UP", shown["servers"]
    python, rust = snap.server(30000), snap.server(30001)
    assert "sglang::detokenizer" in [c.title for c in python.children]
    assert "sglang::detokenizer" not in [c.title for c in rust.children]
    assert rust.weight_cache_mode == "client" and info["frontend"] == "rust"
    [cache] = snap.view.weight_caches
    assert cache.gpus == (1,) and cache.gpu_mem_mib > 16000 and cache.model.endswith("Qwen3-8B")
    assert not snap.view.orphans and not snap.view.unaccounted, snap.view
    assert [(d["pid"], d["gpus"]) for d in shown["weight_cache_daemons"]] == [(cache.main.pid, [1])]
    assert f"weight-cache daemon pid {cache.main.pid}" in text, text


def test_preflight_and_kill_account_for_the_weight_cache_daemon(matrix, tmp_path):
    """Its memory stays on the GPU by design: the relaunch's preflight passes and names it; the
    kill proves the GPU free of the server's processes and says whose the rest is; the daemon
    lives on. (Last in the module: it stops 0.5.23's second server.)"""
    host = name("0.5.23")

    async def work(cfg, fleet):
        ssh = fleet[host]
        snap = await snapshot(ssh, cfg.host(host).python)
        checked = await run_preflight(ssh, launch_spec(cfg, host, 30001), snap)
        assert not checked.failures(), checked.lines()  # before: "GPU 1 is held by pid N"
        ctx = ActionContext(cfg, fleet)
        plan = await plan_kill(ctx, host, 30001)
        said = f"loads from weight-cache daemon pid {snap.view.weight_caches[0].main.pid}"
        assert any(said in line for line in plan.lines), plan.lines
        audit, rollbacks = AuditLog(tmp_path / "a.jsonl"), RollbackStore(tmp_path / "rollback")
        killed = await kill(ctx, host, 30001, audit=audit, rollbacks=rollbacks)
        after = await snapshot(ssh, cfg.host(host).python)
        return snap.view.weight_caches[0], checked, killed, after

    cache, checked, killed, after = on_fleet(matrix, work)
    gpu = next(c for c in checked.checks if c.name == "gpu 1")
    assert f"weight-cache daemon pid {cache.main.pid} keeps" in gpu.detail, gpu
    assert killed.ok and f"weight-cache daemon pid {cache.main.pid} keeps" in killed.summary
    assert "GPUs [1] free of the server's processes" in killed.summary, killed.summary
    assert after.server(30001) is None and [c.main.pid for c in after.view.weight_caches] == [
        cache.main.pid
    ]
