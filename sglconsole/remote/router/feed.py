"""The router feed: every router in hosts.yaml asked for its worker list, periodically.

One task per router (named by it), each asking ``GET /workers`` through the router client the
actions use (remote.router), and the router's /metrics where hosts.yaml gives its `metrics_port`
(the breaker and in-flight requests per worker: remote.router.gateway), and writing the answer
into the fleet's `RouterState` (with its generation, as said or detected); then the views
of the hosts it fronts are published again, since whether a server serves anybody is derived
from that list (state.routing). A router that does not answer is marked unreachable with the
reason; the other routers and the hosts keep updating.

Every `canary.interval` of the router (300 s unset) the canary's prompts are asked through it too,
as its clients ask (remote.canary_ask): the router picks the worker, so a run belongs to the
router, not to one server; an answer that differs from the first one seen on the profile of its
servers (when they share one) is a finding, as for a server.
"""

from __future__ import annotations

import asyncio
import logging
import time

from sglconsole.config import Canary, Config, Router
from sglconsole.config.routers import split_target
from sglconsole.core.canary import worst
from sglconsole.core.deadline import within
from sglconsole.errors import ConsoleError
from sglconsole.remote.canary_ask import ask_all
from sglconsole.remote.router.gateway import WorkerGauges, generation_of
from sglconsole.remote.router.metrics import metrics_endpoint, read_gauges
from sglconsole.remote.router.workers import (
    RouterError,
    router_client,
    router_endpoint,
    same_url,
)
from sglconsole.remote.ssh.connection import SshFleet
from sglconsole.state.canary import CanaryRun
from sglconsole.state.fleet import FleetState
from sglconsole.state.routing import RouterWorker

log = logging.getLogger(__name__)

INTERVAL_S = 2.0
TIMEOUT_S = 5.0


class RouterFeed:
    def __init__(
        self,
        config: Config,
        ssh: SshFleet,
        fleet: FleetState,
        *,
        interval: float = INTERVAL_S,
        canaries: bool = True,
    ):
        self.routers = dict(config.routers)
        self.config = config
        self.ssh = ssh
        self.fleet = fleet
        self.interval = interval
        self.canaries = canaries

    def tasks(self) -> list[asyncio.Task]:
        tasks = [
            asyncio.create_task(self.run(name), name=f"router:{name}") for name in self.routers
        ]
        if self.canaries:
            tasks += [
                asyncio.create_task(self.canary(name), name=f"router-canary:{name}")
                for name, router in self.routers.items()
                if (router.canary or Canary()).interval > 0
            ]
        return tasks

    async def canary(self, name: str) -> None:
        """The canary through router NAME, every interval while it answers its worker list."""
        router = self.routers[name]
        settings = router.canary or Canary()
        while True:
            if self.fleet.routers[name].reachable:
                try:
                    await self.ask(name, router, settings)
                except Exception:  # noqa: BLE001 - a bug must not stop the router's canary
                    log.exception("router %s: canary failed", name)
            await asyncio.sleep(settings.interval)

    async def ask(self, name: str, router: Router, settings: Canary) -> None:
        state = self.fleet.routers[name]
        began = time.time()
        try:
            endpoint = await within(router_endpoint(self.ssh, router), TIMEOUT_S)
        except (ConsoleError, TimeoutError, OSError) as exc:
            state.canary.skipped = (began, f"not reached: {exc}")
            return
        answers = await ask_all(endpoint, settings.timeout)
        profiles = self._profiles(router)
        profile = next(iter(profiles)) if len(profiles) == 1 else None
        changed = tuple(
            note
            for answer in answers
            if (note := self.fleet.answers.compare(profile, answer, f"router {name}"))
        )
        verdict = worst([answer.verdict for answer in answers])
        reasons = [f"{one.prompt}: {one.reason}" for one in answers if one.verdict != "OK"]
        healthy = any(worker.healthy for worker in state.workers)
        state.canary.record(
            CanaryRun(
                time=began,
                pid=None,
                verdict=verdict,
                reason="; ".join(reasons),
                answers=tuple(answers),
                via=f"router {name}",
                health_ok=healthy,
                changed=changed,
            )
        )
        for host in sorted(self.fleet.routed_hosts(name)):
            if host in self.fleet.hosts:
                self.fleet.publish(host)

    def _profiles(self, router: Router) -> set[str]:
        """The profiles of the servers the router fronts, as hosts.yaml says."""
        found = set()
        for target in router.servers:
            parsed = split_target(target)
            server = (
                self.config.find_server(*parsed)
                if parsed and parsed[0] in self.config.hosts
                else None
            )
            if server is not None:
                found.add(server.profile)
        return found

    async def run(self, name: str) -> None:
        while True:
            await self.poll(name)
            await asyncio.sleep(self.interval)

    async def poll(self, name: str) -> None:
        """Ask once; whatever happens, the router's state says it."""
        asked = time.time()
        try:
            workers = await self._workers(name, self.routers[name])
        except ConsoleError as exc:
            self._set(name, asked, None, getattr(exc, "message", None) or str(exc))
        except (TimeoutError, OSError) as exc:
            self._set(name, asked, None, str(exc) or type(exc).__name__)
        except Exception as exc:  # noqa: BLE001 - a bug must not stop the other routers
            log.exception("router %s: poll failed", name)
            self._set(name, asked, None, f"internal error: {type(exc).__name__}: {exc}")
        else:
            self._set(name, asked, workers, None)

    async def _workers(self, name: str, router: Router) -> list[RouterWorker]:
        host = self.fleet.hosts.get(router.host) if router.host else None
        if host is not None and host.source is None and host.reachable is False:
            # its host's SSH monitor retries with backoff: a second caller would only double that
            # (a host read from Prometheus has none: its SSH link is the router's own)
            raise RouterError(name, f"its host {router.host} is unreachable: {host.error}")
        client = await within(router_client(self.ssh, name, router, timeout=TIMEOUT_S), TIMEOUT_S)
        rows = await client.workers()
        state = self.fleet.routers[name]
        state.kind = router.kind or generation_of(rows) or state.kind
        gauges = await self._gauges(name, router)
        return [worker_of(row, gauges) for row in rows if isinstance(row.get("url"), str)]

    async def _gauges(self, name: str, router: Router) -> dict[str, WorkerGauges]:
        """Per worker, what the router's /metrics says; none when it gives no metrics_port or
        the page cannot be read (its gauges are then unknown: the worker list still counts)."""
        try:
            endpoint = await within(metrics_endpoint(self.ssh, router), TIMEOUT_S)
            if endpoint is None:
                return {}
            return await read_gauges(name, endpoint, TIMEOUT_S)
        except (ConsoleError, TimeoutError, OSError) as exc:
            log.info("router %s: /metrics not read: %s", name, exc)
            return {}

    def _set(
        self, name: str, asked: float, workers: list[RouterWorker] | None, error: str | None
    ) -> None:
        state = self.fleet.routers[name]
        reachable = workers is not None
        if state.reachable != reachable:
            state.since = time.time()
        state.reachable, state.error, state.asked_at = reachable, error, asked
        if workers is not None:
            state.workers = workers
        for host in sorted(self.fleet.routed_hosts(name)):
            if host in self.fleet.hosts:
                self.fleet.publish(host)


def worker_of(row: dict, gauges: dict[str, WorkerGauges] | None = None) -> RouterWorker:
    """A row of the router's GET /workers (`id`, `url`, `is_healthy`, `load`: WorkerInfo in
    sglang-router 0.3.x and smg alike), with its gauges from the router's /metrics if read."""
    load = row.get("load")
    url = str(row["url"])
    found = next(
        (value for key, value in (gauges or {}).items() if same_url(key, url)), WorkerGauges()
    )
    return RouterWorker(
        url,
        str(row["id"]) if row.get("id") is not None else None,
        bool(row.get("is_healthy", False)),
        load if isinstance(load, int) else None,
        breaker=found.breaker,
        inflight=found.inflight,
    )
