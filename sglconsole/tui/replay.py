"""`sglconsole replay FILE`: a recording played back into a FleetState, read-only.

The console's clock follows the recording, so uptimes and countdowns read as
they did when it was recorded.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path

from sglconsole.config import Config, HostsFile
from sglconsole.errors import ConfigError
from sglconsole.state.fleet import FleetState, ServerState
from sglconsole.tui import codec
from sglconsole.tui.recorder import FORMAT


@dataclass
class Recording:
    config: Config
    events: list[dict]

    @property
    def start(self) -> float:
        return self.events[0]["t"] if self.events else 0.0


def load(path: Path) -> Recording:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
        events = [json.loads(line) for line in lines if line.strip()]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not a readable sglconsole recording: {exc}") from None
    if not events or events[0].get("kind") != "header" or events[0].get("format") != FORMAT:
        raise ConfigError(f"{path}: not an sglconsole recording (format {FORMAT} header missing)")
    return Recording(Config(HostsFile.model_validate(events[0]["config"]), path), events[1:])


class Replay:
    def __init__(self, recording: Recording, *, speed: float = 1.0, to_end: bool = False):
        self.recording = recording
        self.fleet = FleetState(recording.config)
        self.speed = max(speed, 0.01)
        self.now = recording.start
        self._next = 0
        if to_end:
            self.until(float("inf"))

    def clock(self) -> float:
        return self.now

    def until(self, when: float) -> None:
        """Apply every event recorded up to `when`."""
        events = self.recording.events
        while self._next < len(events) and events[self._next]["t"] <= when:
            self._apply(events[self._next])
            self._next += 1
        if self._next:
            self.now = max(self.now, events[self._next - 1]["t"])

    @property
    def ended(self) -> bool:
        """Whether every recorded event has been applied: what shows is its last moment."""
        return self._next >= len(self.recording.events)

    async def play(self) -> None:
        loop = asyncio.get_running_loop()
        began, start = loop.time(), self.recording.start
        while self._next < len(self.recording.events):
            self.until(start + (loop.time() - began) * self.speed)
            await asyncio.sleep(0.1)

    def _apply(self, event: dict) -> None:
        if event["kind"] == "router":
            router = self.fleet.routers.get(event.get("router", ""))
            if router is not None:
                codec.apply_router(router, event["set"])
                for name in self.fleet.routed_hosts(router.name) & set(self.fleet.hosts):
                    self.fleet.changed(name, None)
            return
        host = self.fleet.hosts.get(event.get("host", ""))
        if host is None:
            return
        port = event.get("port")
        if event["kind"] == "host":
            codec.apply_host(host, event["set"])
        elif event["kind"] == "gone":
            host.servers.pop(port, None)
        else:
            server = self._server(host.name, port)
            self._apply_server(server, event)
            codec.legacy_numbers(server, host, self.now)
        self.fleet.changed(host.name, port)

    def _apply_server(self, server: ServerState, event: dict) -> None:
        kind = event["kind"]
        if kind == "server":
            codec.apply_server(server, event["set"])
        elif kind == "sample":
            fields = {k: v for k, v in event.items() if k not in ("t", "kind", "host", "port")}
            server.history.append(codec.decode_sample(fields))
        elif kind == "log":
            server.log_lines.extend(event["lines"])

    def _server(self, host: str, port: int) -> ServerState:
        servers = self.fleet.hosts[host].servers
        if port not in servers:
            servers[port] = ServerState(host, port, None, None, None)
        return servers[port]
