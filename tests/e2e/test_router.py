"""Router-aware actions against the REAL SGLang router (the sglang-router wheel).

The router runs on the simulated host itself, started over SSH like an operator would, so it
reaches the simulated servers at their real addresses (http://127.0.0.1:3000x inside the host's
network namespace) and the console reaches it through an SSH port forward (hosts.yaml
`host:` + `port:`), exactly as it reaches the servers. Client traffic goes through the router the
same way, while servers are restored under it (helpers shared with bench/router_restore.py).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.router_restore import Traffic, routed_host, routers_yaml, start_router
from sglconsole import config
from sglconsole.actions import ActionContext, StageFailed
from sglconsole.actions.audit import AuditLog
from sglconsole.catalog import ACTIONS
from sglconsole.remote.ssh.connection import SshFleet

pytestmark = pytest.mark.slow


@pytest.fixture
def state_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(folder))
    return folder


def urls(workers: list[dict]) -> set[str]:
    return {w["url"] for w in workers if w.get("is_healthy")}


def test_restore_behind_the_real_router_loses_no_request(fleet_factory, state_dir):
    fleet = fleet_factory([routed_host(2)], extra_config=routers_yaml(2))

    async def main():
        cfg = config.load(fleet.config_path)
        ssh = SshFleet(cfg.hosts)
        try:
            router = await start_router(ssh, 2)
            traffic = Traffic(router.endpoint)
            traffic.start()
            await asyncio.sleep(1.0)
            restore = ACTIONS["restore"]
            seen_out = []
            for port in (30000, 30001):  # a rolling restore
                ctx = ActionContext(cfg, ssh)
                plan = await restore.plan(ctx, "r1", port)
                text = "\n".join(plan.lines)
                assert f"router front: take r1:{port} (http://127.0.0.1:{port}) out first" in text
                assert "put it back in router front only if the probe passes" in text

                def watch(stage, port=port):
                    if stage.name == "drain" and stage.state.value == "running":
                        seen_out.append(port)

                ctx.progress = watch
                result = await restore.run(ctx, "r1", port, plan)
                assert result.ok, result.summary
                names = [s.name for s in result.stages]
                assert names[:2] == ["router out", "drain"] and names[-1] == "router in", names
                assert names.index("answer") < names.index("router in")  # probed first
                assert "back in router front" in result.summary
                assert urls(await router.workers()) == {
                    "http://127.0.0.1:30000",
                    "http://127.0.0.1:30001",
                }
            await asyncio.sleep(0.5)
            await traffic.finish()
            return traffic, seen_out
        finally:
            await ssh.close()

    traffic, seen_out = asyncio.run(main())
    assert traffic.failed == [], traffic.failed[:5]
    assert traffic.ok > 20 and seen_out == [30000, 30001]
    records = [a for a in AuditLog(state_dir / "sglconsole" / "actions.jsonl").actions()]
    steps = [(a["action"], a["port"]) for a in records]
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
    assert all(a["ok"] for a in records)


def test_a_killed_or_failing_server_stays_out_and_the_message_says_how_to_add_it(
    fleet_factory, state_dir
):
    # the host answers degenerate text: a relaunched server's probe fails
    fleet = fleet_factory([routed_host(2, degenerate=True)], extra_config=routers_yaml(2))

    async def main():
        cfg = config.load(fleet.config_path)
        ssh = SshFleet(cfg.hosts)
        try:
            router = await start_router(ssh, 2)
            ctx = ActionContext(cfg, ssh)
            relaunch = ACTIONS["relaunch"]
            result = await relaunch.run(ctx, "r1", 30000, await relaunch.plan(ctx, "r1", 30000))
            assert not result.ok
            assert "probe DEGENERATE" in result.summary, result.summary
            assert "r1:30000 stays out of router front: add it back with ssh r1 " in result.summary
            assert "/workers" in result.summary and "http://127.0.0.1:30000" in result.summary
            assert [s.name for s in result.stages][-1] == "router in"
            assert result.stages[-1].state.value == "skipped"
            assert urls(await router.workers()) == {"http://127.0.0.1:30001"}

            # --keep 1: taking out the last worker would leave none in service
            ctx = ActionContext(cfg, ssh)
            kill = ACTIONS["kill"]
            with pytest.raises(StageFailed, match="fewer than --keep 1: nothing was touched"):
                await kill.run(ctx, "r1", 30001, None, keep=1)
            assert urls(await router.workers()) == {"http://127.0.0.1:30001"}

            ctx = ActionContext(cfg, ssh)
            plan = await kill.plan(ctx, "r1", 30001)
            assert "then r1:30001 stays out of every router (it is stopped)" in plan.lines
            result = await kill.run(ctx, "r1", 30001, plan)
            assert result.ok and "r1:30001 stays out of router front" in result.summary
            assert await router.workers() == []
        finally:
            await ssh.close()

    asyncio.run(main())
    records = AuditLog(state_dir / "sglconsole" / "actions.jsonl").actions()
    assert [a["action"] for a in records if a["action"].startswith("router")] == [
        "router-remove",
        "router-remove",
    ]


def test_rolling_restore_all_from_the_cli_keeps_n_workers_in_service(fleet_factory, state_dir):
    fleet = fleet_factory([routed_host(2)], extra_config=routers_yaml(2))
    cfg = config.load(fleet.config_path)

    async def start_and_list(start: bool) -> set[str]:
        ssh = SshFleet(cfg.hosts)
        try:
            router = await start_router(ssh, 2) if start else None
            if router is None:
                from sglconsole.remote.router.workers import RouterClient, router_endpoint

                router = RouterClient("front", await router_endpoint(ssh, cfg.routers["front"]))
            return urls(await router.workers())
        finally:
            await ssh.close()

    both = {"http://127.0.0.1:30000", "http://127.0.0.1:30001"}
    assert asyncio.run(start_and_list(True)) == both

    def restore_all(*extra: str) -> subprocess.CompletedProcess:
        argv = ["restore", "-c", str(fleet.config_path), "r1", "--all", "--yes", *extra]
        return subprocess.run(
            [sys.executable, "-m", "sglconsole", *argv], capture_output=True, text=True, timeout=300
        )

    dry = subprocess.run(
        [sys.executable, "-m", "sglconsole", "kill", "-c", str(fleet.config_path), "r1:30000"]
        + ["--dry-run"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert "DELETE http://127.0.0.1:39000/workers/" in dry.stdout, dry.stdout
    assert asyncio.run(start_and_list(False)) == both  # a dry run takes nothing out

    refused = restore_all("--keep", "2")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "fewer than --keep 2: nothing was touched" in refused.stdout, refused.stdout
    assert "would keep 1 healthy worker in service" in refused.stdout, refused.stdout
    assert "rolling restore stopped at r1:30000; untouched: r1:30001" in refused.stderr
    assert "== r1:30001" not in refused.stdout
    assert asyncio.run(start_and_list(False)) == both

    rolled = restore_all("--keep", "1")
    assert rolled.returncode == 0, rolled.stdout + rolled.stderr
    out = rolled.stdout
    assert out.index("== r1:30000") < out.index("== r1:30001")
    assert out.count("; back in router front\n") == 2, out
    assert "router front: take r1:30001 (http://127.0.0.1:30001) out first" in out
    assert asyncio.run(start_and_list(False)) == both


def test_a_worker_the_router_did_not_list_is_not_promised_back_and_router_in_adds_it(
    fleet_factory, state_dir
):
    """Restore's dialog promised to put back a worker the router did not list, ran no `router in`
    and said nothing; there was no way to add it but a curl."""
    fleet = fleet_factory([routed_host(2)], extra_config=routers_yaml(2))
    cfg = config.load(fleet.config_path)

    async def restore_one_not_listed():
        ssh = SshFleet(cfg.hosts)
        try:
            router = await start_router(ssh, 2)
            assert await router.remove("http://127.0.0.1:30000")  # as an operator's curl would
            restore = ACTIONS["restore"]
            ctx = ActionContext(cfg, ssh)
            plan = await restore.plan(ctx, "r1", 30000)
            text = "\n".join(plan.lines)
            assert (
                "r1:30000 (http://127.0.0.1:30000) is not in router front now: nothing to take"
                " out, and it will not be added after the restore" in text
            ), text
            assert "sglconsole router-in r1:30000" in text
            assert "put it back in router front" not in text, text
            result = await restore.run(ctx, "r1", 30000, plan)
            assert result.ok, result.summary
            last = result.stages[-1]
            assert last.name == "router in" and last.state.value == "skipped", last
            assert (
                "not in router front before the restore: not added; to add it: sglconsole"
                " router-in r1:30000" in result.summary
            ), result.summary
            return urls(await router.workers())
        finally:
            await ssh.close()

    assert asyncio.run(restore_one_not_listed()) == {"http://127.0.0.1:30001"}

    def router_in(*extra: str) -> subprocess.CompletedProcess:
        argv = ["router-in", "-c", str(fleet.config_path), "r1:30000", *extra]
        return subprocess.run(
            [sys.executable, "-m", "sglconsole", *argv],
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            env={**os.environ, "COLUMNS": "250"},  # one line each, as an operator's wide terminal
        )

    refused = router_in()  # it changes what a router sends where: asks first
    assert refused.returncode == 2 and "refusing without --yes" in refused.stderr, refused.stderr
    added = router_in("--yes")
    assert added.returncode == 0, added.stdout + added.stderr
    out = added.stdout
    assert (
        'router front: POST http://127.0.0.1:39000/workers {"url": "http://127.0.0.1:30000",'
        ' "worker_type": "regular"}' in out
    ), out
    assert out.index("OK      answer") < out.index("OK      router in"), out
    assert "r1:30000 in router front" in out, out

    async def listed_now() -> set[str]:
        from sglconsole.remote.router.workers import RouterClient, router_endpoint

        ssh = SshFleet(cfg.hosts)
        try:
            client = RouterClient("front", await router_endpoint(ssh, cfg.routers["front"]))
            return urls(await client.workers())
        finally:
            await ssh.close()

    assert asyncio.run(listed_now()) == {"http://127.0.0.1:30000", "http://127.0.0.1:30001"}
    again = router_in("--yes")
    assert again.returncode == 0 and "already in every router" in again.stdout, again.stdout
    records = AuditLog(state_dir / "sglconsole" / "actions.jsonl").actions()
    adds = [r for r in records if r["action"] == "router-add"]
    assert len(adds) == 1 and adds[0]["for_action"] == "router-in" and adds[0]["ok"], adds
