"""A rolling restore of routed servers under steady load, through the REAL SGLang router.

    python bench/router_restore.py [--router sglang-router|smg] [--servers 4] [--clients 4]
                                   [--out bench/results.json]

Starts one simulated host with N TP=1 servers, `python -m sglang_router.launch_router` on it in
front of them (started over SSH, so it reaches the servers at their real addresses inside the
host), and a few clients sending /generate through the router non-stop (through an SSH port
forward, as the console reaches it). Then restores the servers one after another, each taken
out of the router, drained, restored, probed and put back (what `sglconsole restore --all HOST`
does). Writes router_restore_requests, router_restore_failed and router_restore_p99_ms into
--out (read, modify, write: the other keys stay). `--router smg` does the same through the SMG
gateway (the `smg` package, in its own venv: see SMG_PYTHON), with an admin token and its
/metrics read, and writes router_restore_smg_* instead.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import httpx  # noqa: E402

from bench import checks  # noqa: E402
from sglconsole import config  # noqa: E402
from sglconsole.actions import ActionContext  # noqa: E402
from sglconsole.catalog import ACTIONS  # noqa: E402
from sglconsole.remote.endpoint import Endpoint  # noqa: E402
from sglconsole.remote.router.workers import RouterClient, router_endpoint  # noqa: E402
from sglconsole.remote.ssh.connection import SshFleet  # noqa: E402
from sglconsole.sim.fleet.scenarios import QWEN8B, demo_profiles  # noqa: E402
from sglconsole.sim.fleet.start import HostSpec, ServerSpec, SimFleet  # noqa: E402

ROUTER_PORT = 39000
HOST = "r1"
SCRIPT = "bench/router_restore.py"
PROMISES: checks.Promises = {
    # key written -> the count that proves it measured (bench.checks)
    "router_restore_requests": "router_restore_requests",
    "router_restore_failed": "router_restore_requests",
    "router_restore_p99_ms": "router_restore_detail.ok_requests",
    "router_restore_detail.p50_ms": "router_restore_detail.ok_requests",
    "router_restore_detail.restores_ok": "router_restore_detail.restores_ok",
}
PROMISES_SMG: checks.Promises = {
    key.replace("router_restore", "router_restore_smg"): path.replace(
        "router_restore", "router_restore_smg"
    )
    for key, path in PROMISES.items()
}
SMALLEST = {"servers": 2, "clients": 2}
NO_ROUTER = "sglang-router is not installed (pip install sglang-router)"
SMG_PYTHON = Path(os.environ.get("SGLCONSOLE_SMG_PYTHON") or REPO / ".venv-smg" / "bin" / "python")
"""The SMG gateway lives in its own venv (./dev and .ci/run make it): both it and sglang-router
0.3.2 install an `smg` command, so one venv cannot hold both."""
NO_SMG = (
    f"smg is not installed at {SMG_PYTHON} (./dev makes .venv-smg; or set SGLCONSOLE_SMG_PYTHON)"
)
TOKEN_ENV = "SGLC_BENCH_SMG_TOKEN"
"""The env var holding the admin token the bench's gateway requires (hosts.yaml names it)."""


def routed_host(count: int, **sglang) -> HostSpec:
    return HostSpec(
        name=HOST,
        gpu_model="H200",
        gpu_count=count,
        models=("Qwen3-8B",),
        sglang={"startup_s": 0.3, **sglang},
        servers=[
            ServerSpec(30000 + i, "qwen8b-tp1", [i], running=[*QWEN8B, "--port", str(30000 + i)])
            for i in range(count)
        ],
    )


def routers_yaml(count: int, router: str | None = None) -> dict:
    """hosts.yaml's `routers:`; ROUTER "smg": the gateway's, with its admin token and metrics."""
    servers = [f"{HOST}:{30000 + i}" for i in range(count)]
    front: dict = {"host": HOST, "port": ROUTER_PORT, "servers": servers}
    if router == "smg":
        front |= {
            "kind": "smg",
            "admin_token": f"${{{TOKEN_ENV}}}",
            "metrics_port": ROUTER_PORT + 1,
        }
    return {"routers": {"front": front}}


def router_argv(
    count: int, router: str | None = None, token: str | None = None, extra: tuple = ()
) -> list[str]:
    """The router's command line on the host: round robin over COUNT servers, /metrics beside."""
    urls = [f"http://127.0.0.1:{30000 + i}" for i in range(count)]
    common = ["--host", "127.0.0.1", "--port", str(ROUTER_PORT), "--worker-urls", *urls]
    common += ["--policy", "round_robin", "--prometheus-host", "127.0.0.1"]
    common += ["--prometheus-port", str(ROUTER_PORT + 1), "--log-level", "warn"]
    if router != "smg":
        return [sys.executable, "-m", "sglang_router.launch_router", *common]
    # a worker that fails its checks is taken out soon (3 checks 1 s apart), as an operator
    # tuning for quick failover would; its admin routes want TOKEN (smg's --control-plane-api-keys
    # takes id:name:role:key, router_args.py _parse_control_plane_api_keys)
    tuned = ["--health-check-interval-secs", "1", "--cb-failure-threshold", "5"]
    keys = ["--control-plane-api-keys", f"bench:bench:admin:{token}"] if token else []
    return [str(SMG_PYTHON), "-m", "smg.launch_router", *common, *tuned, *keys, *extra]


async def start_router(
    fleet: SshFleet, count: int, timeout: float = 60, router: str | None = None, extra: tuple = ()
) -> RouterClient:
    """The router (sglang-router 0.3.x, or ROUTER "smg") on the host, detached, in front of its
    servers; returns once it lists all of them healthy."""
    token = os.environ.setdefault(TOKEN_ENV, "bench-admin-token") if router == "smg" else None
    argv = shlex.join(router_argv(count, router, token, extra))
    command = f"setsid nohup {argv} > /tmp/sglang-router.log 2>&1 < /dev/null &"
    started = await fleet[HOST].run(["sh", "-c", command])
    if not started.ok:
        raise RuntimeError(f"the router did not start: {started.stderr}")
    endpoint = await router_endpoint(fleet, config.Router(host=HOST, port=ROUTER_PORT))
    client = RouterClient("front", endpoint, token=token)
    deadline = time.monotonic() + timeout
    while True:
        try:
            if sum(1 for w in await client.workers() if w.get("is_healthy")) == count:
                return client
        except Exception:
            pass
        if time.monotonic() > deadline:
            log = await fleet[HOST].run(["tail", "-20", "/tmp/sglang-router.log"])
            raise RuntimeError(f"the router did not list {count} workers:\n{log.stdout}")
        await asyncio.sleep(0.3)


class Traffic:
    """Clients sending /generate through the router non-stop, timing and counting each."""

    def __init__(self, endpoint: Endpoint, clients: int = 4, max_tokens: int = 24):
        self.endpoint, self.clients, self.max_tokens = endpoint, clients, max_tokens
        self.latencies_ms: list[float] = []
        self.failed: list[str] = []
        self.stop = asyncio.Event()
        self.tasks: list[asyncio.Task] = []

    @property
    def ok(self) -> int:
        return len(self.latencies_ms)

    async def _client(self) -> None:
        body = {"text": "What is 2+2?", "sampling_params": {"max_new_tokens": self.max_tokens}}
        async with self.endpoint.client(timeout=60) as client:
            while not self.stop.is_set():
                started = time.monotonic()
                try:
                    response = await client.post("/generate", json=body)
                    if response.status_code == 200 and "text" in response.json():
                        self.latencies_ms.append((time.monotonic() - started) * 1000)
                    else:
                        self.failed.append(f"{response.status_code} {response.text[:200]}")
                except (httpx.HTTPError, ValueError) as exc:
                    self.failed.append(f"{type(exc).__name__} {exc}")

    def start(self) -> None:
        self.tasks = [asyncio.create_task(self._client()) for _ in range(self.clients)]

    async def finish(self) -> None:
        self.stop.set()
        await asyncio.gather(*self.tasks)


def p99(values: list[float]) -> float | None:
    if len(values) < 2:
        return values[0] if values else None
    return statistics.quantiles(values, n=100)[98]


def rounded(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


async def rolling_restore(
    config_path: Path, servers: int, clients: int, router_kind: str | None = None
) -> dict:
    cfg = config.load(config_path)
    fleet = SshFleet(cfg.hosts)
    try:
        router = await start_router(fleet, servers, router=router_kind)
        traffic = Traffic(router.endpoint, clients)
        traffic.start()
        await asyncio.sleep(2.0)  # steady load first
        restore = ACTIONS["restore"]
        started = time.monotonic()
        outcomes = []
        for port in range(30000, 30000 + servers):
            ctx = ActionContext(cfg, fleet)
            result = await restore.run(ctx, HOST, port, await restore.plan(ctx, HOST, port))
            outcomes.append(result.ok)
        took = time.monotonic() - started
        await asyncio.sleep(1.0)
        await traffic.finish()
        back = {w["url"] for w in await router.workers() if w.get("is_healthy")}
    finally:
        await fleet.close()
    prefix = "router_restore_smg" if router_kind == "smg" else "router_restore"
    measured = {
        "router_restore_requests": traffic.ok + len(traffic.failed),
        "router_restore_failed": len(traffic.failed),
        "router_restore_p99_ms": rounded(p99(traffic.latencies_ms)),
        "router_restore_detail": {
            "servers": servers,
            "clients": clients,
            "restores_ok": sum(outcomes),
            "seconds": round(took, 1),
            "workers_back_in_router": len(back),
            "ok_requests": traffic.ok,
            "p50_ms": rounded(statistics.median(traffic.latencies_ms) if traffic.ok else None),
            "first_failures": traffic.failed[:5],
            "router": "smg 1.13.0" if router_kind == "smg" else "sglang-router 0.3.2",
        },
    }
    return {key.replace("router_restore", prefix): value for key, value in measured.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--servers", type=int, default=4)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results.json")
    parser.add_argument("--router", choices=("sglang-router", "smg"), default="sglang-router")
    args = checks.parse(parser, SMALLEST)
    smg = args.router == "smg"
    prefix = "router_restore_smg" if smg else "router_restore"
    if smg and not SMG_PYTHON.exists():
        checks.fail(SCRIPT, f"{prefix}_requests", NO_SMG)
    if not smg and importlib.util.find_spec("sglang_router") is None:
        checks.fail(SCRIPT, "router_restore_requests", NO_ROUTER)
    with tempfile.TemporaryDirectory(prefix="sglc-router-bench-") as workdir:
        fleet = SimFleet(
            Path(workdir) / "fleet",
            [routed_host(args.servers)],
            demo_profiles(),
            extra_config=routers_yaml(args.servers, args.router),
        )
        fleet.start()
        try:
            fleet.wait_ready()
            measured = asyncio.run(
                rolling_restore(fleet.config_path, args.servers, args.clients, args.router)
            )
        finally:
            fleet.stop()
    checks.save(SCRIPT, args.out, measured, PROMISES_SMG if smg else PROMISES)
    print(json.dumps(measured, indent=2))
    return 0 if measured[f"{prefix}_failed"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
