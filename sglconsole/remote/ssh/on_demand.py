"""SSH only where it is needed, when the fleet is read from Prometheus: the host being looked at
gets the full SSH monitor (argv, logs, drift by the host's SGLang: what Prometheus cannot hold)
for as long as it is looked at and `idle_s` after; at most `max_hosts` at once (the least recently
looked at goes first); and a connection an action opened is closed once it has been idle for
`idle_s` (no action running on its host)."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import asyncssh

from sglconsole.core.processes import ProcessView
from sglconsole.errors import RemoteError
from sglconsole.remote.ssh.connection import SshFleet
from sglconsole.state.fleet import FleetState

log = logging.getLogger(__name__)

TICK_S = 1.0


class SshOnDemand:
    def __init__(
        self,
        fleet: FleetState,
        ssh: SshFleet,
        make_monitor: Callable[[str], object],
        *,
        max_hosts: int,
        idle_s: float,
        source: str,
    ):
        self.fleet = fleet
        self.ssh = ssh
        self.make_monitor = make_monitor
        self.max_hosts = max_hosts
        self.idle_s = idle_s
        self.source = source
        """What the hosts fall back to when SSH lets go (the feed's name, "prometheus")."""
        self.busy: Callable[[str], bool] = lambda host: False
        """Whether an action runs on a host (the console's session says): never cut it."""
        self.pinned: set[str] = set()
        """Hosts whose connection stays open (a router is read through it every few seconds)."""
        self.looked_at: str | None = None
        self.watched: dict[str, tuple[object, asyncio.Task]] = {}
        self._wanted_at: dict[str, float] = {}
        self._idle_since: dict[str, float] = {}
        self._closing: set[asyncio.Task] = set()
        self.failed: dict[str, str] = {}
        """Hosts looked at that SSH could not reach, and why (shown in their notes)."""

    def look_at(self, host: str | None) -> None:
        """The host the operator looks at now (None: none): watched over SSH from now on."""
        now = time.monotonic()
        if self.looked_at is not None:
            self._wanted_at[self.looked_at] = now
        self.looked_at = host if host in self.fleet.hosts else None
        if self.looked_at is None or self.looked_at in self.watched:
            return
        while len(self.watched) >= self.max_hosts:
            oldest = min(self.watched, key=lambda name: self._wanted_at.get(name, 0.0))
            self._release(oldest)
        monitor = self.make_monitor(self.looked_at)
        task = asyncio.create_task(self._watch(self.looked_at, monitor), name=f"ssh:{host}")
        self.watched[self.looked_at] = (monitor, task)

    async def _watch(self, host: str, monitor) -> None:
        """Connect first: a host SSH cannot reach keeps Prometheus's numbers, with why in its
        notes (a console may read Prometheus from where no SSH goes)."""
        state = self.fleet.hosts[host]
        try:
            await self.ssh[host].connect()
        except (RemoteError, OSError, asyncssh.Error) as exc:
            message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            log.info("%s: looked at, but SSH failed: %s", host, message)
            self.failed[host] = message
            kept = [
                note
                for note in (state.view.notes if state.view else ())
                if not note.startswith("SSH")
            ]
            note = f"SSH failed, so no argv or log: {message}"
            state.view = ProcessView((), (), (), False, (*kept, note))
            self.watched.pop(host, None)
            self.fleet.publish(host)
            return
        self.failed.pop(host, None)
        state.source = None  # its views are derived from what SSH sees (state.server_view)
        _forget(state)
        log.info("%s: watched over SSH while it is looked at", host)
        await monitor.run()

    async def run(self) -> None:
        while True:
            await asyncio.sleep(TICK_S)
            await self.sweep(time.monotonic())

    async def sweep(self, now: float) -> None:
        for host in list(self.watched):
            if host != self.looked_at and now - self._wanted_at.get(host, now) >= self.idle_s:
                self._release(host)
        for name in self.fleet.hosts:
            link = self.ssh[name]
            kept = name in self.watched or name in self.pinned or self.busy(name)
            if kept or not link.connected:
                self._idle_since.pop(name, None)
                continue
            since = self._idle_since.setdefault(name, now)
            if now - since >= self.idle_s:
                self._idle_since.pop(name, None)
                log.info("%s: SSH connection idle for %.0f s: closed", name, now - since)
                await link.close()

    def _release(self, host: str) -> None:
        monitor, task = self.watched.pop(host)
        task.cancel()
        self._closing.add(asyncio.create_task(self._close(host, monitor, task)))
        state = self.fleet.hosts[host]
        if state.source is None:  # it was watched over SSH: Prometheus's numbers again
            state.source = self.source
            _forget(state)
        self.fleet.publish(host)
        log.info("%s: no longer looked at: back to Prometheus's numbers", host)

    async def _close(self, host: str, monitor, task: asyncio.Task) -> None:
        await asyncio.gather(task, return_exceptions=True)
        await _close_quietly(monitor)
        if not self.busy(host) and host not in self.watched:
            await self.ssh[host].close()
        self._closing.discard(asyncio.current_task())

    def open_connections(self) -> int:
        return sum(1 for name in self.fleet.hosts if self.ssh[name].connected)

    async def stop(self) -> None:
        for host in list(self.watched):
            self._release(host)
        await asyncio.gather(*self._closing, return_exceptions=True)


async def _close_quietly(monitor) -> None:
    try:
        await monitor.close()
    except Exception:  # noqa: BLE001 - closing must not raise into the loop
        log.debug("closing a monitor failed", exc_info=True)


def _forget(state) -> None:
    """What one source saw of the host's processes is not the other's: start from nothing."""
    state.view = None
    state.reachable = None
    for server in state.servers.values():
        server.process = None
        server.absent = None
