"""The per-host monitor: one SSH connection, and the feeds that read it into fleet state.

While connected, concurrent feeds run: GPUs (a long-lived ``nvidia-smi -lms`` stream), the
watcher (processes, compute-apps, log tails), HTTP polls of each server through a port forward
(which also starts each server's drift check), a journal follower per systemd unit without a
log file, and the signs before an outage (the kernel log, the GPUs' ECC counters). A dropped
connection marks the host UNREACHABLE with the reason and retries with capped exponential backoff;
what the feeds keep across reconnects (log offsets, journal cursors) lives in the feeds, which
outlive the connection.
"""

from __future__ import annotations

import asyncio
import logging
import time

import asyncssh

from sglconsole.config import Host
from sglconsole.core.deadline import cancel_all
from sglconsole.errors import RemoteError
from sglconsole.remote.feeds.backoff import MAX_BACKOFF_S, Backoff
from sglconsole.remote.feeds.canary import CanaryFeed
from sglconsole.remote.feeds.containers import ContainerFeed
from sglconsole.remote.feeds.drift import DriftFeed
from sglconsole.remote.feeds.gpu import GpuFeed
from sglconsole.remote.feeds.host_link import HostLink
from sglconsole.remote.feeds.http import HttpFeed
from sglconsole.remote.feeds.journal import JournalFeed
from sglconsole.remote.feeds.kernel import KernelFeed
from sglconsole.remote.feeds.watcher import WatcherFeed
from sglconsole.remote.parser_cache import ParserCache
from sglconsole.remote.ssh.connection import SshHost
from sglconsole.state.fleet import FleetState

log = logging.getLogger(__name__)


class HostMonitor:
    def __init__(
        self,
        name: str,
        host: Host,
        ssh: SshHost,
        fleet: FleetState,
        *,
        watch_interval: float = 2.0,
        log_poll: float = 0.1,
        parser_cache: ParserCache | None = None,
        canaries: bool = True,
    ):
        self.name = name
        self.ssh = ssh
        self.link = HostLink(name, host, ssh, fleet)
        self.state = fleet.hosts[name]
        self.gpus = GpuFeed(self.link)
        self.drift = DriftFeed(self.link, parser_cache or ParserCache())
        self.http = HttpFeed(self.link, self.drift)
        self.watcher = WatcherFeed(
            self.link,
            watch_interval=watch_interval,
            log_poll=log_poll,
            on_new_process=self._new_process,
            on_activity=self._work_arrived,
            container_version=lambda info: self.containers.version(info),
        )
        self.containers = ContainerFeed(
            self.link, on_change=self.watcher.rejoin, on_activity=self._work_arrived
        )
        self.journal = JournalFeed(self.link, on_activity=self._work_arrived)
        self.canary = CanaryFeed(self.link, enabled=canaries)
        self.kernel = KernelFeed(self.link)

    def _new_process(self, port: int) -> None:
        """Another pid serves this port: asked at once, and which container it runs in."""
        self.http.new_process(port)
        self.containers.survey()
        self.containers.flush()

    def _work_arrived(self, port: int) -> None:
        """A batch line in a server's log: the HTTP feed asks a quiet server at once, unless the
        batch is our own canary's."""
        if not self.canary.asking(port):
            self.http.activity(port)

    async def run(self) -> None:
        backoff = Backoff(cap=MAX_BACKOFF_S)
        while True:
            try:
                await self.ssh.connect()
                self._mark(True, None)
                backoff.reset()
                await self._connected()
            except RemoteError as exc:
                self._mark(False, exc.message)
            except (OSError, asyncio.IncompleteReadError, asyncssh.Error) as exc:
                self._mark(False, str(exc) or type(exc).__name__)
            except Exception as exc:  # noqa: BLE001 - a bug must not silence a host forever
                log.exception("%s: monitor error", self.name)
                self._mark(False, f"internal error: {type(exc).__name__}: {exc}")
            await self.ssh.close()
            delay = backoff.next()  # jittered: a fleet that failed together comes back spread out
            self.state.retry_at = time.time() + delay
            self.link.publish()
            await asyncio.sleep(delay)

    async def close(self) -> None:
        await self.http.close()

    def _mark(self, reachable: bool, error: str | None) -> None:
        if self.state.reachable != reachable or self.state.error != error:
            self.state.since = time.time()
        self.state.reachable = reachable
        self.state.error = error
        self.state.retry_at = None
        self.link.publish()

    async def _connected(self) -> None:
        """Every feed at once; the first to fail (the connection is gone) stops them all."""
        feeds = [self.gpus.run(), self.watcher.run(), self.http.run(), self.canary.run()]
        feeds.append(self.containers.run())
        if self.link.host.gpu_health_interval:  # signs before an outage (state.precursors)
            feeds.append(self.gpus.run_health())
        if self.link.host.kernel_log:
            feeds.append(self.kernel.run())
        feeds += [self.journal.run(server) for server in self.journal.servers()]
        tasks = [asyncio.create_task(coroutine) for coroutine in feeds]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                task.result()
        finally:
            await cancel_all(tasks)  # a feed's lost cancel (asyncssh's wait_for) is sent again
            self.watcher.disconnected()
