"""Router-aware actions and the router view against the REAL SMG gateway (the `smg` wheel, 1.13).

The gateway runs on the simulated host, started over SSH like an operator would (bench/
router_restore.py, `--router smg`): it requires an admin bearer token (hosts.yaml names it by
`${VAR}`), publishes its /metrics on the next port, and reaches the simulated servers at their
real addresses. Client traffic goes through it while the console drains, restores and puts
servers back; the simulator's live `http` fault makes a server fail its generations (500s, which
the gateway counts against its breaker) or its /health.

smg lives in its own venv (.venv-smg, made by ./dev): it and sglang-router 0.3.2 both install an
`smg` command.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest
from textual.theme import BUILTIN_THEMES

from bench.router_restore import (
    HOST,
    SMG_PYTHON,
    TOKEN_ENV,
    Traffic,
    routed_host,
    routers_yaml,
    start_router,
)
from sglconsole import config
from sglconsole.actions import ActionContext, StageFailed
from sglconsole.actions.audit import AuditLog
from sglconsole.actions.launch import relaunch
from sglconsole.alerts.tracker import AlertTracker, sweep
from sglconsole.catalog import ACTIONS
from sglconsole.exporter.collector import FleetCollector
from sglconsole.remote.monitor import FleetMonitor
from sglconsole.remote.router.metrics import metrics_endpoint, read_gauges
from sglconsole.remote.router.workers import RouterClient, RouterError, router_endpoint
from sglconsole.remote.ssh.connection import SshFleet
from sglconsole.state.json_view import fleet_json
from sglconsole.state.routing import Routing
from sglconsole.state.status_schema import StatusJson
from sglconsole.tui.paint.palette import palette_of
from sglconsole.tui.paint.router import router_view, tree_mark
from tests.cli import cli
from tests.tui.helpers import plain

pytestmark = pytest.mark.slow

URL = "http://127.0.0.1:{}"
TOKEN = "test-admin-token-3f9c"


@pytest.fixture(autouse=True)
def smg_installed():
    if not SMG_PYTHON.exists():
        why = f"the SMG gateway is not installed at {SMG_PYTHON}: ./dev setup makes .venv-smg"
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)


@pytest.fixture
def state_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(folder))
    monkeypatch.setenv(TOKEN_ENV, TOKEN)  # the token hosts.yaml names: only in the environment
    return folder


def set_port(fleet, port: int, **values) -> None:
    """Change how one simulated server answers, while it runs (read live)."""
    path = fleet.hosts[HOST].root / "sim" / "host.json"
    data = json.loads(path.read_text())
    ports = data.setdefault("sglang", {}).setdefault("ports", {})
    ports.setdefault(str(port), {}).update(values)
    path.write_text(json.dumps(data))


def healthy_urls(workers: list[dict]) -> set[str]:
    return {worker["url"] for worker in workers if worker.get("is_healthy")}


def test_rolling_restore_through_the_smg_gateway_loses_no_request_and_verifies_each_put_back(
    fleet_factory, state_dir
):
    fleet = fleet_factory([routed_host(2)], extra_config=routers_yaml(2, "smg"))
    assert TOKEN not in fleet.config_path.read_text()  # hosts.yaml holds only ${VAR}

    async def main():
        cfg = config.load(fleet.config_path)
        ssh = SshFleet(cfg.hosts)
        try:
            # the gateway's default policy (cache_aware), as most run it
            router = await start_router(ssh, 2, router="smg", extra=("--policy", "cache_aware"))
            # the gateway's worker routes want the admin token: without it, it says so
            bare = RouterClient("front", await router_endpoint(ssh, cfg.routers["front"]))
            with pytest.raises(RouterError, match="wants an admin token"):
                await bare.workers()
            traffic = Traffic(router.endpoint, clients=3)
            traffic.start()
            await asyncio.sleep(1.0)
            restore = ACTIONS["restore"]
            details = []
            for port in (30000, 30001):
                ctx = ActionContext(cfg, ssh)
                plan = await restore.plan(ctx, HOST, port)
                assert f"router front: take r1:{port} ({URL.format(port)}) out first" in (
                    "\n".join(plan.lines)
                )
                verify = (
                    "router front (SMG gateway): once it is back, check that it routes to"
                    f" r1:{port} again (healthy, breaker closed, a probe through it), else fail"
                )
                assert verify in plan.lines, plan.lines
                result = await restore.run(ctx, HOST, port, plan)
                assert result.ok, result.summary
                names = [stage.name for stage in result.stages]
                assert names[:2] == ["router out", "drain"] and names[-1] == "router in", names
                details.append(result.stages[-1].detail)
                assert healthy_urls(await router.workers()) == {
                    URL.format(30000),
                    URL.format(30001),
                }
            await asyncio.sleep(0.5)
            await traffic.finish()
            return traffic, details
        finally:
            await ssh.close()

    traffic, details = asyncio.run(main())
    assert traffic.failed == [], traffic.failed[:5]
    assert traffic.ok > 20
    for port, detail in zip((30000, 30001), details, strict=True):
        # verified on the gateway: listed healthy, breaker closed, a probe through it reached it
        assert detail.startswith(f"{URL.format(port)} in router front: healthy, breaker closed"), (
            detail
        )
        assert "a probe through it reached it" in detail, detail
    records = AuditLog(state_dir / "sglconsole" / "actions.jsonl").actions()
    steps = [(record["action"], record["port"]) for record in records]
    assert steps == [
        ("router-remove", 30000),
        ("drain", 30000),
        ("restore", 30000),
        ("router-add", 30000),
        ("router-remove", 30001),
        ("drain", 30001),
        ("restore", 30001),
        ("router-add", 30001),
    ], steps
    assert all(record["ok"] for record in records)
    assert TOKEN not in (state_dir / "sglconsole" / "actions.jsonl").read_text()


async def test_a_breaker_opened_by_failed_requests_is_shown_alerted_and_its_server_rejoins(
    fleet_factory, state_dir
):
    """r1:30001 answers 500 to every generation while its /health is fine: the gateway opens that
    worker's breaker and sends it nothing, though the server is UP and its /health passes. The
    console shows it in the route, the tree, status --json and the exporter, and alerts it; once
    the server answers again the gateway half-opens, closes and routes to it: the console says
    so. (smg 1.13 counts only 408, 429 and 5xx against a breaker, worker.rs record_outcome:
    the 400s that opened sglang's gateway's breakers, sglang#25811, no longer do; 429s did not
    open it here either. Whatever opened it, an open breaker reads the same.)"""
    routers = routers_yaml(2, "smg")
    del routers["routers"]["front"]["kind"]  # which generation: told from its worker list
    fleet = fleet_factory([routed_host(2)], extra_config=routers)
    cfg = config.load(fleet.config_path)
    tracker, alerts = AlertTracker(hold_s=1.0), []
    async with FleetMonitor(cfg) as monitor:
        state = monitor.state
        # the breaker half-opens 3 s after it opened (smg's --cb-timeout-duration-secs)
        router = await start_router(
            monitor.ssh, 2, router="smg", extra=("--cb-timeout-duration-secs", "3")
        )
        server = state.server(HOST, 30001)

        def route():
            return next((r for r in server.view.routes if r.router == "front"), None)

        async def sweeping():  # as the console and the exporter do, all along
            while True:
                for name in state.hosts:
                    state.publish(name)
                alerts.extend(sweep(state, tracker, time.time()))
                await asyncio.sleep(0.2)

        async def until(check, timeout, what):
            deadline = time.monotonic() + timeout
            while not check():
                seen = route()
                assert time.monotonic() < deadline, f"{what}: {seen}"
                await asyncio.sleep(0.2)

        sweeper = asyncio.create_task(sweeping())
        traffic = Traffic(router.endpoint, clients=2)
        try:
            await until(lambda: route() is not None and route().breaker == "closed", 40, "closed")
            assert route().routing == Routing.SERVING
            assert state.routers["front"].kind == "smg"
            traffic.start()  # the gateway publishes a worker's in-flight count once it sent one
            await until(lambda: route().inflight is not None, 20, "its in-flight requests")
            set_port(fleet, 30001, http="500", http_paths=["/generate"])
            await until(lambda: route().routing == Routing.BREAKER_OPEN, 30, "breaker open")
            assert route().problem and route().breaker == "open"
            assert route().describe() == (
                "router front: in router, breaker open (the gateway sends"
                " http://127.0.0.1:30001 nothing until it closes)"
            )
            assert tree_mark(server) == "⇄ breaker"
            palette = palette_of(BUILTIN_THEMES["textual-dark"])
            shown = plain(router_view(state.routers["front"], state, palette, time.time()))
            (row,) = [line for line in shown.splitlines() if line.startswith("r1:30001")]
            assert row.split()[2:5] == ["healthy", "0", "open"], shown  # listed, load, breaker
            assert "breaker" in shown and "flight" in shown, shown
            out = fleet_json(state)
            StatusJson.model_validate(out)  # the schema knows every key
            shown = next(s for s in out["hosts"][HOST]["servers"] if s["port"] == 30001)
            (front,) = shown["routers"]
            assert front["routing"] == "in router, breaker open" and front["breaker"] == "open"
            assert front["problem"] is True
            workers = {w["server"]: w for w in out["routers"]["front"]["workers"]}
            assert workers["r1:30001"]["breaker"] == "open"
            assert workers["r1:30000"]["breaker"] == "closed"
            assert out["routers"]["front"]["kind"] == "smg"
            series = {
                (metric.name, sample.labels.get("port")): sample.value
                for metric in FleetCollector(state).collect()
                for sample in metric.samples
                if metric.name.startswith("sglconsole_server_router_breaker_open")
            }
            assert series[("sglconsole_server_router_breaker_open", "30001")] == 1.0, series
            assert series[("sglconsole_server_router_breaker_open", "30000")] == 0.0, series
            await until(
                lambda: any(a.routing == Routing.BREAKER_OPEN.value for a in alerts), 20, "alert"
            )
            (alert,) = [a for a in alerts if a.routing == Routing.BREAKER_OPEN.value]
            assert (alert.host, alert.port, alert.router) == (HOST, 30001, "front")
            assert alert.to_json()["routing"] == "in router, breaker open", alert.to_json()

            # --keep counts the workers in service: one whose breaker is open serves nobody
            kill = ACTIONS["kill"]
            with pytest.raises(StageFailed) as refused:
                await kill.run(ActionContext(cfg, monitor.ssh), HOST, 30000, None, keep=1)
            assert str(refused.value) == (
                "router front would keep 0 healthy workers in service (1 with its breaker open),"
                " fewer than --keep 1: nothing was touched"
            )
            assert server.process is not None and state.server(HOST, 30000).process is not None

            # the CLI, another process, reads the same gateway (its token from the environment)
            status = cli("status", "--json", "-c", str(fleet.config_path))
            printed = json.loads(status.stdout)
            StatusJson.model_validate(printed)
            listed = {w["server"]: w for w in printed["routers"]["front"]["workers"]}
            assert listed["r1:30001"]["breaker"] in ("open", "half-open"), listed

            # the server answers again: the gateway half-opens, closes and routes to it
            set_port(fleet, 30001, http=None, http_paths=None)
            await until(lambda: route().routing == Routing.SERVING, 40, "back in router")
            await until(lambda: route().breaker == "closed", 20, "breaker closed")
            await until(lambda: any(a.routing == "in router" for a in alerts), 20, "its end")
        finally:
            sweeper.cancel()
            await traffic.finish()
    assert traffic.ok > 20


async def test_a_server_restarted_on_its_address_behind_the_gateway_rejoins_and_the_console_says_so(
    fleet_factory, state_dir
):
    """r1:30001 is restarted on its own address behind the gateway's back (stopped and launched
    again, as an operator's own restart would, not this console's routed sequence): while it is
    gone the console shows it in its router but down, or its breaker open (the requests that
    failed meanwhile opened it, and it stays open after the server is back until the gateway
    tries it again: a restarted server gets nothing for that long); smg 1.13 keeps probing it
    (the fix of smg PR #2468) and takes it back, and the console shows it serving again, as the
    gateway's own counters confirm. Had the gateway not taken it back, it would stay 'in router,
    unhealthy' while it answers, which is alerted after the grace (tests/test_routing_state.py)."""
    fleet = fleet_factory([routed_host(2)], extra_config=routers_yaml(2, "smg"))
    cfg = config.load(fleet.config_path)
    seen: list[Routing] = []
    async with FleetMonitor(cfg) as monitor:
        state = monitor.state
        # requests that failed while it was gone open its breaker: it half-opens after 5 s
        router = await start_router(
            monitor.ssh, 2, router="smg", extra=("--cb-timeout-duration-secs", "5")
        )
        server = state.server(HOST, 30001)
        gauges_at = await metrics_endpoint(monitor.ssh, cfg.routers["front"])

        def route():
            return next((r for r in server.view.routes if r.router == "front"), None)

        async def until(check, timeout, what):
            deadline = time.monotonic() + timeout
            while not check():
                current = route()
                if current is not None and (not seen or seen[-1] != current.routing):
                    seen.append(current.routing)
                assert time.monotonic() < deadline, f"{what}: {current}; seen {seen}"
                await asyncio.sleep(0.1)

        await until(lambda: route() is not None and route().routing == Routing.SERVING, 40, "in")
        old_pid = server.view.pid
        traffic = Traffic(router.endpoint, clients=2)
        traffic.start()
        try:
            restarted = asyncio.create_task(relaunch(ActionContext(cfg, monitor.ssh), HOST, 30001))
            gone = (Routing.IN_ROUTER_DOWN, Routing.BREAKER_OPEN)
            await until(lambda: route().routing in gone, 40, "down, or its breaker open")
            result = await restarted
            assert result.ok, result.summary
            before = (await read_gauges("front", gauges_at))[URL.format(30001)].requests or 0
            deadline = time.monotonic() + 60
            while True:  # the console says it serves, and the gateway's counters agree
                now = (await read_gauges("front", gauges_at))[URL.format(30001)]
                current = route()
                if current.routing != seen[-1]:
                    seen.append(current.routing)
                back = current.routing == Routing.SERVING and current.breaker == "closed"
                if back and server.view.pid != old_pid and (now.requests or 0) > before:
                    break
                assert time.monotonic() < deadline, (current, now, seen)
                await asyncio.sleep(0.5)
            assert current.healthy is True and now.breaker == "closed"
        finally:
            await traffic.finish()
    assert set(seen) & {Routing.IN_ROUTER_DOWN, Routing.BREAKER_OPEN}, seen
    assert seen[-1] == Routing.SERVING, seen


JOIN_S = 15
"""The router's join_timeout in the test below: its own 60 s would be most of the test; its
20 attempts take the gateway longer than this."""


def test_a_put_back_the_gateway_does_not_take_leaves_the_restore_failed_and_says_so(
    fleet_factory, state_dir
):
    """r1:30001's /health fails (its generation and /health_generate answer): the console's
    restore starts it and probes it fine, but the gateway's job to add it checks /health and
    keeps retrying (20 attempts, its WorkerSpec's max_connection_attempts). The worker did not
    rejoin: the action fails and says so, never 'back in router', and the job is called off so
    that it stays out as said, even once its /health answers."""
    routers = routers_yaml(2, "smg")
    routers["routers"]["front"]["join_timeout"] = JOIN_S  # the gateway's job outlasts it
    fleet = fleet_factory([routed_host(2)], extra_config=routers)

    async def main():
        cfg = config.load(fleet.config_path)
        ssh = SshFleet(cfg.hosts)
        try:
            router = await start_router(ssh, 2, router="smg")
            set_port(fleet, 30001, http="500", http_paths=["/health"])
            restore = ACTIONS["restore"]
            ctx = ActionContext(cfg, ssh)
            with pytest.raises(Exception) as failed:
                await restore.run(ctx, HOST, 30001, await restore.plan(ctx, HOST, 30001))
            set_port(fleet, 30001, http=None, http_paths=None)  # it answers /health now
            await asyncio.sleep(3.0)
            return str(failed.value), healthy_urls(await router.workers())
        finally:
            await ssh.close()

    message, listed = asyncio.run(main())
    assert "back in router" not in message
    assert f"not listed after {JOIN_S:g}s (its add job was still processing: called off)" in message
    assert "r1:30001 stays out of router front" in message, message
    assert f"Authorization: Bearer ${{{TOKEN_ENV}}}" in message and TOKEN not in message, message
    assert URL.format(30001) not in listed and URL.format(30000) in listed
    records = AuditLog(state_dir / "sglconsole" / "actions.jsonl").actions()
    adds = [record for record in records if record["action"] == "router-add"]
    assert len(adds) == 1 and adds[0]["ok"] is False, adds
