"""Router-aware actions against the REAL SGLang router (the sglang-router wheel).

The router runs on the simulated host itself, started over SSH like an operator would, so it
reaches the simulated servers at their real addresses (http://127.0.0.1:3000x inside the host's
network namespace) and the console reaches it through an SSH port forward (hosts.yaml
`host:` + `port:`), exactly as it reaches the servers. Client traffic goes through the router the
same way, while servers are restored under it.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import httpx
import pytest

from sglconsole import config
from sglconsole.actions import ActionContext, StageFailed
from sglconsole.actions.audit import AuditLog
from sglconsole.actions.registry import ACTIONS
from sglconsole.remote.router import RouterClient, router_base
from sglconsole.remote.ssh import Fleet
from sglconsole.sim.fleet import HostSpec, ServerSpec
from sglconsole.sim.scenarios import QWEN8B

pytestmark = pytest.mark.slow

ROUTER_PORT = 39000


def routed_host(count: int = 2, **sglang) -> HostSpec:
    return HostSpec(
        name="r1",
        gpu_model="H200",
        gpu_count=count,
        models=("Qwen3-8B",),
        sglang={"startup_s": 0.3, **sglang},
        servers=[
            ServerSpec(30000 + i, "qwen8b-tp1", [i], running=[*QWEN8B, "--port", str(30000 + i)])
            for i in range(count)
        ],
    )


def routers_yaml(count: int) -> dict:
    servers = [f"r1:{30000 + i}" for i in range(count)]
    return {"routers": {"front": {"host": "r1", "port": ROUTER_PORT, "servers": servers}}}


@pytest.fixture
def state_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(folder))
    return folder


async def start_router(fleet: Fleet, count: int) -> RouterClient:
    """`python -m sglang_router.launch_router` on the host, detached, in front of its servers."""
    urls = " ".join(f"http://127.0.0.1:{30000 + i}" for i in range(count))
    command = (
        f"setsid nohup {sys.executable} -m sglang_router.launch_router --host 127.0.0.1"
        f" --port {ROUTER_PORT} --worker-urls {urls} --policy round_robin"
        f" --prometheus-host 127.0.0.1 --prometheus-port {ROUTER_PORT + 1} --log-level warn"
        " > /tmp/sglang-router.log 2>&1 < /dev/null &"
    )
    started = await fleet["r1"].run(["sh", "-c", command])
    assert started.ok, started.stderr
    cfg_router = config.Router(host="r1", port=ROUTER_PORT)
    client = RouterClient("front", await router_base(fleet, cfg_router))
    deadline = time.monotonic() + 60
    while True:
        try:
            workers = await client.workers()
            if sum(1 for w in workers if w.get("is_healthy")) == count:
                return client
        except Exception:
            pass
        if time.monotonic() > deadline:
            log = await fleet["r1"].run(["tail", "-20", "/tmp/sglang-router.log"])
            raise AssertionError(f"the router did not list {count} workers:\n{log.stdout}")
        await asyncio.sleep(0.3)


class Traffic:
    """A few clients sending /generate through the router, non-stop, counting every failure."""

    def __init__(self, base: str, clients: int = 4):
        self.base, self.clients = base, clients
        self.ok = 0
        self.failed: list[str] = []
        self.stop = asyncio.Event()
        self.tasks: list[asyncio.Task] = []

    async def _client(self) -> None:
        body = {"text": "What is 2+2?", "sampling_params": {"max_new_tokens": 24}}
        async with httpx.AsyncClient(timeout=60, trust_env=False) as client:
            while not self.stop.is_set():
                try:
                    response = await client.post(self.base + "/generate", json=body)
                    if response.status_code == 200 and "text" in response.json():
                        self.ok += 1
                    else:
                        self.failed.append(f"{response.status_code} {response.text[:200]}")
                except (httpx.HTTPError, ValueError) as exc:
                    self.failed.append(f"{type(exc).__name__} {exc}")

    def start(self) -> None:
        self.tasks = [asyncio.create_task(self._client()) for _ in range(self.clients)]

    async def finish(self) -> None:
        self.stop.set()
        await asyncio.gather(*self.tasks)


def urls(workers: list[dict]) -> set[str]:
    return {w["url"] for w in workers if w.get("is_healthy")}


def test_restore_behind_the_real_router_loses_no_request(fleet_factory, state_dir):
    fleet = fleet_factory([routed_host(2)], extra_config=routers_yaml(2))

    async def main():
        cfg = config.load(fleet.config_path)
        ssh = Fleet(cfg.hosts)
        try:
            router = await start_router(ssh, 2)
            traffic = Traffic(router.base)
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
        ssh = Fleet(cfg.hosts)
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
