"""`sglconsole replay FILE`: a recording played back into a FleetState, read-only.

The console's clock follows the recording, so uptimes and countdowns read as
they did when it was recorded, and alerts are swept at the recording's own moments (not by
the screen's wall-clock timer): the same recording gives the same alerts at any speed. Space
pauses, a seek jumps (back: rebuilt from the start, silently, the new moment a fresh baseline).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sglconsole.alerts.tracker import Alert, AlertTracker, sweep
from sglconsole.config import Config, HostsFile
from sglconsole.errors import ConfigError
from sglconsole.state.fleet import FleetState, HostState, ServerState, ServerView
from sglconsole.tui import codec
from sglconsole.tui.recorder import FORMAT

TICK_S = 0.1  # how often playback moves the recording's clock on


@dataclass
class Recording:
    config: Config
    events: list[dict]

    @property
    def start(self) -> float:
        return self.events[0]["t"] if self.events else 0.0

    @property
    def end(self) -> float:
        return self.events[-1]["t"] if self.events else 0.0


def load(path: Path) -> Recording:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
        events = [json.loads(line) for line in lines if line.strip()]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: not a readable sglconsole recording: {exc}") from None
    if not events or events[0].get("kind") != "header" or events[0].get("format") != FORMAT:
        raise ConfigError(f"{path}: not an sglconsole recording (format {FORMAT} header missing)")
    return Recording(Config(HostsFile.model_validate(events[0]["config"]), path), events[1:])


def as_recorded(server: ServerState, host: HostState, now: float, generation: int) -> ServerView:
    """A replayed server's view is the recording's (tui.codec applied it): published as it is."""
    return server.view


class Replay:
    def __init__(self, recording: Recording, *, speed: float = 1.0, to_end: bool = False):
        self.recording = recording
        self.fleet = FleetState(recording.config)
        self.speed = max(speed, 0.01)
        self.now = recording.start
        self.paused = False
        self.tracker = AlertTracker()
        self._alerts: list[Alert] = []
        self._next = 0
        if to_end:
            self._jump(recording.end)

    def clock(self) -> float:
        return self.now

    def until(self, when: float) -> None:
        """Apply every event recorded up to `when`, sweeping alerts at each recorded moment."""
        self._advance(when, sweeping=True)

    def _advance(self, when: float, *, sweeping: bool) -> None:
        events = self.recording.events
        while self._next < len(events) and events[self._next]["t"] <= when:
            moment = events[self._next]["t"]
            self.now = max(self.now, moment)
            self._apply(events[self._next])
            self._next += 1
            last_of_moment = self._next >= len(events) or events[self._next]["t"] != moment
            if sweeping and last_of_moment:
                self._alerts += sweep(self.fleet, self.tracker, moment)
        later = max(self.now, min(when, self.recording.end))
        if later > self.now:
            self.now = later
            if sweeping:  # a status holds on while nothing is recorded: time still counts
                self._alerts += sweep(self.fleet, self.tracker, later)

    def take_alerts(self) -> list[Alert]:
        """The alerts raised since the last call, each at its recorded time."""
        taken, self._alerts = self._alerts, []
        return taken

    def seek(self, seconds: float) -> float:
        """Move `seconds` on (or back, when negative) within the recording; the new time.
        On: played through, alerts and all. Back: rebuilt from the start without alerts (they
        were told), and the moment reached is the new baseline."""
        target = min(max(self.now + seconds, self.recording.start), self.recording.end)
        if target >= self.now:
            self.until(target)
        else:
            self._jump(target)
        return self.now

    def _jump(self, target: float) -> None:
        """Rebuild the fleet as it was at `target`, silently: what shows then is the baseline."""
        fresh = FleetState(self.recording.config)
        self.fleet.hosts.clear()
        self.fleet.hosts.update(fresh.hosts)
        self.fleet.routers.clear()
        self.fleet.routers.update(fresh.routers)
        self._next, self.now = 0, self.recording.start
        self._advance(target, sweeping=False)
        self.tracker, self._alerts = AlertTracker(), []
        sweep(self.fleet, self.tracker, self.now)  # the baseline: nothing in it is news
        for name in self.fleet.hosts:
            self.fleet.publish(name, self.now, derive=as_recorded)

    @property
    def ended(self) -> bool:
        """Whether every recorded event has been applied: what shows is its last moment."""
        return self._next >= len(self.recording.events)

    async def play(self, on_end: Callable[[], None] | None = None) -> None:
        """Move the recording's clock on with the wall clock (times `speed`) while not paused;
        `on_end` each time playback reaches the end (a seek back plays it again)."""
        loop = asyncio.get_running_loop()
        last, was_ended = loop.time(), self.ended
        while True:
            await asyncio.sleep(TICK_S)
            wall = loop.time()
            step, last = (wall - last) * self.speed, wall
            if not self.paused and not self.ended:
                self.until(self.now + step)
            if self.ended and not was_ended and on_end is not None:
                on_end()
            was_ended = self.ended

    def _apply(self, event: dict) -> None:
        if event["kind"] == "router":
            router = self.fleet.routers.get(event.get("router", ""))
            if router is not None:
                codec.apply_router(router, event["set"])
                for name in self.fleet.routed_hosts(router.name) & set(self.fleet.hosts):
                    self.fleet.publish(name, self.now, derive=as_recorded)
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
        self.fleet.publish(host.name, self.now, port, derive=as_recorded)

    def _apply_server(self, server: ServerState, event: dict) -> None:
        kind = event["kind"]
        if kind == "server":
            codec.apply_server(server, event["set"])
        elif kind == "sample":
            fields = {
                name: value
                for name, value in event.items()
                if name not in ("t", "kind", "host", "port")
            }
            server.history.append(codec.decode_sample(fields))
        elif kind == "log":
            server.log_lines.extend(event["lines"])

    def _server(self, host: str, port: int) -> ServerState:
        servers = self.fleet.hosts[host].servers
        if port not in servers:
            servers[port] = ServerState(host, port, None, None, None)
        return servers[port]
