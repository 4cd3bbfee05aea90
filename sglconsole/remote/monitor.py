"""Watch every host of a config concurrently: one HostMonitor task per host, or, when hosts.yaml
names a `source: {prometheus: URL}`, one reader of that Prometheus for the whole fleet."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from sglconsole.config import Config
from sglconsole.core.containers import ENGINES, may_run_in_container
from sglconsole.core.deadline import cancel_all, within
from sglconsole.remote.feeds.host_monitor import HostMonitor
from sglconsole.remote.parser_cache import ParserCache
from sglconsole.remote.prometheus.exporter_series import SOURCE
from sglconsole.remote.prometheus.feed import PrometheusFeed
from sglconsole.remote.router.feed import RouterFeed
from sglconsole.remote.ssh.connection import SshFleet
from sglconsole.remote.ssh.on_demand import SshOnDemand
from sglconsole.state.fleet import FleetState
from sglconsole.state.liveness import generate_pending
from sglconsole.state.model import StopLookup, no_stops

ENGINES_WAIT_S = 5.0  # a container engine slower than this to list its containers (a hung
# daemon: the agent waits 30 s) does not hold up a one-shot status: its servers show as processes


class FleetMonitor:
    def __init__(
        self,
        config: Config,
        *,
        ssh: SshFleet | None = None,
        watch_interval: float = 2.0,
        log_poll: float = 0.1,
        use_source: bool = True,
        stops: StopLookup = no_stops,
        canaries: bool = True,
    ):
        """use_source=False: over SSH even when hosts.yaml names a source (the exporter, which
        is what that Prometheus reads). stops: the operator's stops, from the audit log (read
        above this layer). canaries=False: no canary runs (a one-shot status does not wait for
        them)."""
        self.canaries = canaries
        self.config = config
        self.state = FleetState(config, stops)
        self.ssh = ssh or SshFleet(config.hosts)  # connects only when used: actions need it
        self.parser_cache = ParserCache()
        source = config.model.source if use_source else None
        self.prometheus = PrometheusFeed(source, self.state) if source is not None else None
        self._intervals = (watch_interval, log_poll)
        self.monitors = (
            {}
            if self.prometheus is not None
            else {name: self._host_monitor(name) for name in config.hosts}
        )
        self.on_demand = (
            SshOnDemand(
                self.state,
                self.ssh,
                self._host_monitor,
                max_hosts=source.ssh_hosts,
                idle_s=source.ssh_idle,
                source=SOURCE,
            )
            if source is not None
            else None
        )
        # routers are read over this console's own connections, in either mode: a router's
        # worker list is in no Prometheus series we read
        self.routers = (
            RouterFeed(config, self.ssh, self.state, canaries=canaries) if config.routers else None
        )
        if self.on_demand is not None and self.routers is not None:
            self.on_demand.pinned = {
                router.host for router in config.routers.values() if router.host
            }
        self._tasks: list[asyncio.Task] = []

    def _host_monitor(self, name: str) -> HostMonitor:
        watch_interval, log_poll = self._intervals
        return HostMonitor(
            name,
            self.config.hosts[name],
            self.ssh[name],
            self.state,
            watch_interval=watch_interval,
            log_poll=log_poll,
            parser_cache=self.parser_cache,
            canaries=self.canaries,
        )

    def look_at(self, host: str | None) -> None:
        """The host the operator looks at: with a Prometheus source, watched over SSH while it
        is (remote.ssh_on_demand); over SSH every host is watched anyway."""
        if self.on_demand is not None:
            self.on_demand.look_at(host)

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(monitor.run(), name=f"monitor:{name}")
            for name, monitor in self.monitors.items()
        ]
        if self.routers is not None:
            self._tasks += self.routers.tasks()
        if self.prometheus is not None:
            self._tasks.append(asyncio.create_task(self.prometheus.run(), name="monitor:prom"))
        if self.on_demand is not None:
            self._tasks.append(asyncio.create_task(self.on_demand.run(), name="monitor:ssh-idle"))

    async def stop(self) -> None:
        # the connections close meanwhile: a feed's remote command then ends with its channel,
        # where alone it would be waited for (nvidia-smi -lms ends at its next write, 1 s later)
        await asyncio.gather(cancel_all(self._tasks), self.ssh.close())
        if self.on_demand is not None:
            await self.on_demand.stop()
        await asyncio.gather(
            *(monitor.close() for monitor in self.monitors.values()), return_exceptions=True
        )
        if self.prometheus is not None:
            await self.prometheus.close()
        await self.ssh.close()

    async def __aenter__(self) -> FleetMonitor:
        self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.stop()

    async def wait_settled(self, timeout: float) -> bool:
        """Until every host has answered (or failed) once and every running server has a health
        answer."""

        def settled() -> bool:
            hosts = all(self._settled(name) for name in self.state.hosts)
            routers = self.routers is None or all(
                router.reachable is not None for router in self.state.routers.values()
            )
            return hosts and routers

        return await self._until(settled, timeout)

    async def wait_drift(self, timeout: float) -> list[str]:
        """Until the host's SGLang has judged every managed server that answers (drift or its
        error), at most `timeout` s; the servers still waiting (\"host:port\")."""

        def waiting() -> list[str]:
            return [server.key for server in self.state.all_servers() if drift_pending(server)]

        await self._until(lambda: not waiting(), timeout)
        return waiting()

    async def wait_liveness(self, timeout: float) -> None:
        """Until no generating health check is waiting within its bound (state.liveness): a
        one-shot status says STALLED or UP only once the scheduler has answered or not."""

        def answered() -> bool:
            now = time.time()
            return not any(generate_pending(server, now) for server in self.state.all_servers())

        await self._until(answered, timeout)

    async def _until(self, done: Callable[[], bool], timeout: float) -> bool:
        """Until DONE() holds (True) or TIMEOUT s pass (False): looked at again whenever the fleet
        state publishes a change, and every 0.1 s."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        changed = asyncio.Event()
        unsubscribe = self.state.subscribe(lambda _host, _port: changed.set())
        try:
            while not done():
                left = deadline - loop.time()
                if left <= 0:
                    return False
                changed.clear()
                try:
                    await within(changed.wait(), min(0.1, left))
                except TimeoutError:
                    pass
            return True
        finally:
            unsubscribe()

    def _settled(self, name: str) -> bool:
        if self.prometheus is not None:
            return self.prometheus.answered
        host = self.state.hosts[name]
        if host.reachable is False:
            return True
        if host.reachable is None or host.view is None or (not host.gpus and not host.gpu_error):
            return False
        running = [server for server in host.servers.values() if server.process is not None]
        told = set(ENGINES) <= set(host.engines) or "agent" in host.engines
        waited = host.since is not None and time.time() - host.since > ENGINES_WAIT_S
        in_doubt = any(may_run_in_container(server.process) for server in running)
        if in_doubt and not (told or waited):
            return False  # which server runs in a container is not known yet
        return all(server.health is not None for server in running)


def drift_pending(server) -> bool:
    """A managed, running, answering server whose comparison with its profile has not come yet."""
    return (
        server.managed
        and server.process is not None
        and bool(server.process.main.argv)  # known by its metrics alone: no argv to judge
        and server.health == "ok"
        and server.drift is None
        and server.drift_error is None
    )
