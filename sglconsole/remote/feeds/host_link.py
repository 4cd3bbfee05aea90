"""What every feed of one host shares: its name, its config, its SSH connection, its state."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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

    async def follow(
        self,
        argv: list[str],
        on_line: Callable[[str, Any], None],
        on_start: Callable[[Any], None] = lambda stream: None,
    ) -> tuple[int | None, str]:
        """Run ARGV on the host and hand each line it prints to ON_LINE(line, stream) until it
        ends: (its exit status, its last line on stderr or ""). HostUnreachable when it ended
        because the connection did (the host monitor reconnects)."""
        stream = await self.ssh.stream(argv)
        on_start(stream)
        try:
            async for line in stream:
                on_line(line, stream)
            if stream.exit_status is None and not await self.ssh.still_connected():
                raise self.lost()
            words = (await stream.stderr_text()).strip().splitlines()
        finally:
            await stream.close()
        return stream.exit_status, words[-1] if words else ""


def agent_message(line: str) -> tuple[str, dict] | None:
    """One JSON line of an agent of ours as (its kind `t`, the message); None for anything else
    (a host that says something odd is not believed, and never raises)."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if not isinstance(message, dict) or not isinstance(message.get("t"), str):
        return None  # {"t": []} is no kind (and unhashable)
    return message["t"], message
