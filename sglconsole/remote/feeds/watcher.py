"""The watcher feed of one host: the read-only watcher agent's processes, compute-apps and log
lines, into its state.

Log offsets (path -> inode and byte offset) outlive a reconnect, so no line is lost or repeated.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable

from sglconsole.core.containers import ContainerInfo, container_of, in_container
from sglconsole.core.nvidia_smi import parse_compute_apps
from sglconsole.core.processes import ProcInfo, analyse
from sglconsole.remote.agents import source
from sglconsole.remote.feeds.host_link import HostLink, agent_message
from sglconsole.state.fleet import ServerState
from sglconsole.state.ingest import take_line
from sglconsole.state.precursors import take_memory

log = logging.getLogger(__name__)

HEARTBEAT_S = 60.0
"""The feed reads no heartbeat (a change is a message, the SSH keepalive proves the link): one a
minute, not one per scan — each was a packet an idle console decrypted and parsed."""


class WatcherFeed:
    def __init__(
        self,
        link: HostLink,
        *,
        watch_interval: float,
        log_poll: float,
        on_new_process: Callable[[int], None],
        on_activity: Callable[[int], None] = lambda port: None,
        container_version: Callable[[ContainerInfo], str | None] = lambda info: None,
    ):
        self.link = link
        self.container_version = container_version
        """The SGLang version inside a container (remote.feeds.containers), None: not known."""
        self.watch_interval = watch_interval
        self.log_poll = log_poll
        self.on_new_process = on_new_process
        """Called with the port of a server whose process is new (another pid)."""
        self.on_activity = on_activity
        """Called with the port of a server whose log wrote a batch (prefill or decode) line."""
        self.offsets: dict[str, dict] = {}  # path -> {"ino", "off"}: survives reconnects
        self.followed: set[str] = set()
        self._procs: list[ProcInfo] | None = None
        """This run of the agent's last process scan; None before its first: the agent says its
        compute-apps first, and a view of no processes then would say every server is down."""

    async def run(self) -> None:
        link = self.link
        python = link.host.python
        while True:
            args = {
                "interval": self.watch_interval,
                "heartbeat": HEARTBEAT_S,
                "log_poll": self.log_poll,
                "follow": self._wanted_logs(),
                "memory_interval": link.host.memory_interval,
            }
            followed = set(args["follow"])
            status, last = await link.follow(
                [python, "-c", source("watcher_agent"), json.dumps(args)],
                self.handle,
                on_start=lambda _stream, followed=followed: self._started(followed),
            )
            link.state.watcher_error = f"watcher ({python}) exited {status}: {last or 'no output'}"
            link.publish()
            await asyncio.sleep(10)

    def _started(self, followed: set[str]) -> None:
        self.followed = followed
        self._procs = None  # a scan of the last run is not this host's processes now

    def disconnected(self) -> None:
        self.followed.clear()

    def _wanted_logs(self) -> dict[str, dict]:
        wanted = {}
        for server in self.link.state.servers.values():
            if server.log_path:
                wanted[server.log_path] = self.offsets.get(server.log_path, {})
        return wanted

    def handle(self, line: str, stream) -> None:
        """One line of the watcher; whatever it says, never an exception."""
        found = agent_message(line)
        if found is None:
            return
        kind, message = found
        handler = {
            "log": self._on_log,
            "procs": lambda message: self._on_procs(message, stream),
            "apps": self._on_apps,
            "log_state": self._on_log_state,
            "mem": self._on_memory,
        }.get(kind)
        if handler is None:
            return
        state = self.link.state
        try:
            handler(message)
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            # our own watcher never says this; a host that does is shown, not believed
            state.watcher_error = f"unexpected message from the watcher: {type(exc).__name__}"
            return
        state.watcher_error = None

    def _owner(self, path: str) -> ServerState | None:
        for server in self.link.state.servers.values():
            if server.log_path == path:
                return server
        return None

    def _on_log(self, message: dict) -> None:
        path = message.get("path")
        if not isinstance(path, str):
            return
        self.offsets[path] = {"ino": message.get("ino"), "off": message.get("off")}
        server = self._owner(path)
        if server is None:
            return
        now, batch = time.time(), False
        for text in _list(message.get("lines")):
            if isinstance(text, str):
                record = take_line(server, text, now)
                batch = batch or (record is not None and record.kind in ("decode", "prefill"))
        if batch:
            self.on_activity(server.port)
        skipped = message.get("skipped")
        if message.get("head") and isinstance(skipped, int) and skipped > 0:
            # the current lifetime's start-up came first; the tail follows
            server.log_lines.append(
                f"--- sglconsole: {skipped / 1024:,.0f} KiB of this run's log not read ---"
            )
        self.link.publish(server.port)

    def _on_log_state(self, message: dict) -> None:
        server = self._owner(message.get("path"))
        if server is None:
            return
        state = message.get("state")
        state = state if isinstance(state, str) else "unknown"
        server.log_state = state if state != "following" else None
        if state in ("rotated", "truncated"):
            server.log_lines.append(f"--- sglconsole: log {state}, following the new file ---")
        self.link.publish(server.port)

    def _on_memory(self, message: dict) -> None:
        take_memory(self.link.state, message, time.time())
        self.link.publish()

    def _on_apps(self, message: dict) -> None:
        if message.get("rc") == 0 and isinstance(message.get("out"), str):
            self.link.state.apps = parse_compute_apps(message["out"])
        self._reanalyse()

    def _on_procs(self, message: dict, stream) -> None:
        procs = [
            ProcInfo.from_json(record)
            for record in _list(message.get("procs"))
            if isinstance(record, dict)
        ]
        self._procs = [proc for proc in procs if proc is not None]
        self._reanalyse()
        self._follow_stdout(stream)

    def rejoin(self) -> None:
        """The containers changed (remote.feeds.containers): which server runs in which."""
        self._reanalyse()

    def _reanalyse(self) -> None:
        if self._procs is None:  # no scan yet: which servers run is not known
            return
        state = self.link.state
        view = analyse(self._procs, state.apps, state.gpus)
        state.view = view
        seen = set()
        for process in view.servers:
            container = container_of(process, state.containers)
            if container is not None:  # its host port, its GPUs (core.containers.join)
                process = in_container(process, container)
            seen.add(process.port)
            server = state.servers.get(process.port)
            if server is None:
                server = ServerState(self.link.name, process.port, None, None, None)
                state.servers[process.port] = server
            if server.process is None or server.process.main.pid != process.main.pid:
                server.new_process(process)  # a new pid starts with no numbers
                self.on_new_process(process.port)
            server.process = process
            server.container = container
            server.container_version = (
                self.container_version(container) if container is not None else None
            )
            if server.log_path is None and _is_file(process.main.stdout):
                server.log_path = process.main.stdout
        for port, server in list(state.servers.items()):
            if port not in seen:
                server.process_gone()
                server.health = None
                server.container = server.container_version = None
                if not server.managed:
                    del state.servers[port]
        self.link.publish()

    def _follow_stdout(self, stream) -> None:
        """Logs found since the watcher started (a new server's stdout): asked for on its stdin."""
        wanted = {
            path: self.offsets.get(path, {})
            for path in self._wanted_logs()
            if path not in self.followed
        }
        if wanted:
            self.followed |= set(wanted)
            try:
                stream.write(json.dumps({"follow": wanted}) + "\n")
            except Exception as exc:  # noqa: BLE001 - a closing channel: the reconnect re-follows
                log.debug("%s: cannot ask the watcher to follow: %s", self.link.name, exc)


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _is_file(path: str | None) -> bool:
    return (
        bool(path)
        and path.startswith("/")
        and not path.startswith(("/dev/", "/proc/"))
        and "(deleted)" not in path
    )
