"""The container feed of one host: its Docker/Podman containers (the container agent's
`inspect`), the SGLang version inside each server's container, and each one's log.

An engine the host does not have is nothing (said once in the log, shown as absent); one the
login may not use is said (denied). The servers themselves are the watcher's (found by argv in
/proc); this feed says which container each runs in (core.containers.join). A container's log
is read one start at a time (`logs --follow --since STARTED_AT`), resumed after a reconnect
from the last line's timestamp (no line lost or repeated); a restarted container is another
lifetime, read from its own start, and its numbers start empty (a new pid: ServerState).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
from collections import deque
from collections.abc import Callable

from sglconsole.core.containers import (
    ContainerInfo,
    format_stamp,
    image_index,
    is_sglang,
    lifetime,
    log_writer,
    parse_inspect,
    split_stamp,
)
from sglconsole.remote.agents import source
from sglconsole.remote.feeds.host_link import HostLink, agent_message
from sglconsole.state.ingest import take_line
from sglconsole.state.model import LOG_LINES

log = logging.getLogger(__name__)

PENDING_LINES = LOG_LINES  # kept for a server the watcher has not found yet: the tail it shows
SURVEY_S = 5.0  # heartbeats; `ps` of an engine whose event stream cannot run (the agent)
POLL_ENV = "SGLCONSOLE_CONTAINER_POLL"  # set: `ps` each SURVEY_S, no event stream (a bench's)
VERSION_TIMEOUT_S = 30.0
# the SGLang inside, by the container's own python: the installed distribution, else the
# package's __version__ (a source checkout has no distribution metadata)
VERSION_CODE = (
    "import sys\n"
    "try:\n"
    "    from importlib.metadata import version\n"
    "    print(version('sglang'))\n"
    "except Exception:\n"
    "    import sglang\n"
    "    print(sglang.__version__)\n"
)


class ContainerFeed:
    def __init__(
        self,
        link: HostLink,
        *,
        on_change: Callable[[], None],
        on_activity: Callable[[int], None] = lambda port: None,
        interval: float = SURVEY_S,
    ):
        self.link = link
        self.on_change = on_change
        """Called when the containers changed: the watcher joins them to its servers again."""
        self.on_activity = on_activity
        self.interval = interval
        self.cursors: dict[tuple[str, str | None], tuple[int, int]] = {}
        """(container id, its start) -> timestamp of the last log line read: survives
        reconnects."""
        self.versions: dict[tuple[str, str | None], str | None] = {}
        self._asked: set[tuple[str, str | None]] = set()
        self._following: set[tuple[str, str | None]] = set()
        self._tasks: set[asyncio.Task] = set()
        self._stream = None
        self._pending: dict[str, deque[str]] = {}
        self._resumed: dict[tuple[str, str | None], tuple[int, int]] = {}

    def survey(self) -> None:
        """Inspect every container now (a server's pid changed: a restart keeps a container's id
        and state, so the agent's `ps` alone does not show it)."""
        if self._stream is None:
            return
        try:
            self._stream.write(json.dumps({"survey": True}) + "\n")
        except Exception as exc:  # noqa: BLE001 - a closing channel: the reconnect surveys anew
            log.debug("%s: cannot ask for a survey: %s", self.link.name, exc)

    async def run(self) -> None:
        link = self.link
        python = link.host.python
        while True:
            args = json.dumps({"interval": self.interval, "events": not os.environ.get(POLL_ENV)})
            try:
                status, last = await link.follow(
                    [python, "-c", source("container_agent"), args], self.handle, self._started
                )
            finally:
                for task in self._tasks:
                    task.cancel()
            link.state.engines["agent"] = ("error", f"container agent exited {status}: {last}")
            link.publish()
            await asyncio.sleep(10)

    def _started(self, stream) -> None:
        self._stream = stream
        self._following.clear()

    def handle(self, line: str, stream) -> None:
        """One line of the agent; whatever it says, never an exception."""
        found = agent_message(line)
        if found is None:
            return
        kind, message = found
        try:
            if kind == "engine":
                self._on_engine(message)
            elif kind == "containers":
                self._on_containers(message, stream)
            elif kind == "clog":
                self._on_log(message)
            elif kind == "events":
                self._on_events(message)
            elif kind == "clog_end":
                self._following = {key for key in self._following if key[0] != message.get("id")}
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            log.debug("%s: unexpected container agent message: %s", self.link.name, exc)

    def _on_engine(self, message: dict) -> None:
        engine, state = str(message.get("engine")), str(message.get("state"))
        detail = message.get("detail") if isinstance(message.get("detail"), str) else None
        before = self.link.state.engines.get(engine)
        self.link.state.engines[engine] = (state, detail)
        if before != (state, detail):
            log.info("%s: %s %s%s", self.link.name, engine, state, f": {detail}" if detail else "")
        if state != "ok":  # its containers are no longer known
            self._replace(engine, ())
        self.link.publish()

    def _on_events(self, message: dict) -> None:
        """How the agent learns of changes: said once per change (a fallback to `ps` is news)."""
        engine, state, detail = message.get("engine"), message.get("state"), message.get("detail")
        if state == "poll":
            log.info("%s: %s events unavailable (%s): polling `ps`", self.link.name, engine, detail)
        else:
            log.debug("%s: %s events followed", self.link.name, engine)

    def _on_containers(self, message: dict, stream) -> None:
        engine = str(message.get("engine"))
        images = image_index(message.get("images") or [])
        infos = parse_inspect(message.get("inspect") or [], engine, images)
        self._replace(engine, infos)
        wanted = {}
        for info in infos:
            if not (info.running and is_sglang(info)):
                continue
            key = lifetime(info)
            if key not in self._asked:
                self._asked.add(key)
                self._spawn(self._ask_version(info))
            if key not in self._following:
                self._following.add(key)
                cursor = self.cursors.get(key)
                since = format_stamp(cursor) if cursor else info.started_at
                if cursor:
                    self._resumed[key] = cursor
                wanted[info.id] = {"engine": info.engine, "since": since}
        if wanted:
            try:
                stream.write(json.dumps({"follow": wanted}) + "\n")
            except Exception as exc:  # noqa: BLE001 - a closing channel: the reconnect re-follows
                log.debug("%s: cannot ask for container logs: %s", self.link.name, exc)
        self.on_change()

    def _replace(self, engine: str, infos: tuple[ContainerInfo, ...]) -> None:
        state = self.link.state
        others = tuple(info for info in state.containers if info.engine != engine)
        state.containers = others + infos

    def _on_log(self, message: dict) -> None:
        container = message.get("id")
        lines = [text for text in message.get("lines") or () if isinstance(text, str)]
        info = next((info for info in self.link.state.containers if info.id == container), None)
        if info is None:
            return
        pending = self._pending.setdefault(info.id, deque(maxlen=PENDING_LINES))
        pending.extend(lines)
        self._deliver(info)

    def flush(self) -> None:
        """Lines read before the watcher had found their server: to it, now that it may have."""
        for info in self.link.state.containers:
            if self._pending.get(info.id):
                self._deliver(info)

    def _deliver(self, info: ContainerInfo) -> None:
        server = self.link.state.servers.get(info.port) if info.port is not None else None
        if server is None:
            return  # kept until the watcher finds its process (flush)
        pending = self._pending.pop(info.id, ())
        key = lifetime(info)
        resumed = self._resumed.get(key)  # lines up to it were read before a reconnect
        now, batch = time.time(), False
        for text in pending:
            stamp, line = split_stamp(text)
            # the container's server process, whatever pid SGLang printed inside its namespace
            writer = log_writer(info, server.process, stamp)
            if stamp is not None and resumed is not None:
                if stamp <= resumed:
                    continue  # `--since` is inclusive: read before the reconnect
                self._resumed.pop(key, None)  # past it: every line counts
                resumed = None
            if stamp is not None:
                self.cursors[key] = stamp
            record = take_line(server, line, now, writer=writer)
            batch = batch or (record is not None and record.kind in ("decode", "prefill"))
        if batch:
            self.on_activity(server.port)
        self.link.publish(server.port)

    def version(self, info: ContainerInfo) -> str | None:
        """The SGLang version inside this start of the container (None: not known yet)."""
        return self.versions.get(lifetime(info))

    async def _ask_version(self, info: ContainerInfo) -> None:
        python = info.argv[0] if info.argv and "python" in info.argv[0].rsplit("/", 1)[-1] else None
        argv = [info.engine, "exec", info.id, python or "python3", "-c", VERSION_CODE]
        try:
            result = await self.link.ssh.run(argv, timeout=VERSION_TIMEOUT_S)
        except asyncio.CancelledError:  # the connection went: asked again once it is back
            self._asked.discard(lifetime(info))
            raise
        except Exception as exc:  # noqa: BLE001 - unknown, not an error of the host
            log.debug("%s: version of %s: %s", self.link.name, info.name, exc)
            self._asked.discard(lifetime(info))  # asked again at the next listing
            return
        lines = result.stdout.strip().splitlines() if result.exit_status == 0 else []
        self.versions[lifetime(info)] = lines[-1].strip() if lines else None
        self.on_change()

    def _spawn(self, coroutine) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
