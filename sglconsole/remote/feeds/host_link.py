"""What every feed of one host shares: its name, its config, its SSH connection, its state."""

from __future__ import annotations

from dataclasses import dataclass

from sglconsole.config import Host
from sglconsole.errors import HostUnreachable
from sglconsole.remote.ssh.connection import SshHost
from sglconsole.state.fleet import FleetState
from sglconsole.state.model import HostState


@dataclass
class HostLink:
    name: str
    host: Host
    ssh: SshHost
    fleet: FleetState

    @property
    def state(self) -> HostState:
        return self.fleet.hosts[self.name]

    def publish(self, port: int | None = None) -> None:
        """Publish a change of this host (of one server's when `port` is given) through the
        fleet's one door: statuses are recomputed, views redraw."""
        self.fleet.publish(self.name, port=port)

    def lost(self) -> HostUnreachable:
        return HostUnreachable(self.name, self.ssh.last_error or "connection lost")
