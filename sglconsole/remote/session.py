"""The per-host monitor: streams over one SSH connection, fed into fleet state.

Three concurrent loops per connected host: one long-lived ``nvidia-smi -lms``
stream, the watcher (processes, compute-apps, log tails), and HTTP polls of
each server through a port forward. A dropped connection marks the host
UNREACHABLE with the reason and retries with capped exponential backoff; log
offsets survive reconnects so no line is lost or repeated.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import deque

import asyncssh
import httpx

from sglconsole.config import Host
from sglconsole.core.metrics import parse_metrics
from sglconsole.core.nvidia_smi import (
    GPU_QUERY_FIELDS,
    GpuStreamAssembler,
    classify_nvidia_smi_error,
    gpu_query_args,
    parse_compute_apps,
)
from sglconsole.core.processes import ProcInfo, analyse
from sglconsole.errors import HostUnreachable, RemoteError
from sglconsole.remote.agents import source
from sglconsole.remote.backoff import MAX_BACKOFF_S, Backoff
from sglconsole.remote.inspect import INFO_PATHS, first_json
from sglconsole.remote.parser_cache import ParserCache
from sglconsole.remote.ssh import SshHost
from sglconsole.state.fleet import FleetState, ServerState
from sglconsole.state.ingest import take_line

log = logging.getLogger(__name__)

HTTP_INTERVAL_S = 5.0
INFO_REFRESH_S = 60.0


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
    ):
        self.name = name
        self.host = host
        self.ssh = ssh
        self.fleet = fleet
        self.state = fleet.hosts[name]
        self.watch_interval = watch_interval
        self.log_poll = log_poll
        self.parser_cache = parser_cache or ParserCache()
        self.offsets: dict[str, dict] = {}  # path -> {"ino", "off"}: survives reconnects
        self._followed: set[str] = set()
        self._procs: list[ProcInfo] = []
        self._http = httpx.AsyncClient(timeout=httpx.Timeout(5.0), trust_env=False)
        self._info_at: dict[int, float] = {}
        self._ready_path: dict[int, str] = {}
        self._alive_path: dict[int, str] = {}
        self._no_metrics: set[int] = (
            set()
        )  # ports whose server answered /metrics with 404 (no --enable-metrics)
        self._new_server = asyncio.Event()
        self._cursors: dict[str, str] = {}  # systemd unit -> journal cursor: survives reconnects

    # ------------------------------------------------------------ lifecycle

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
            self._changed()
            await asyncio.sleep(delay)

    async def close(self) -> None:
        await self._http.aclose()

    def _mark(self, reachable: bool, error: str | None) -> None:
        if self.state.reachable != reachable or self.state.error != error:
            self.state.since = time.time()
        self.state.reachable = reachable
        self.state.error = error
        self.state.retry_at = None
        self._changed()

    def _changed(self, port: int | None = None) -> None:
        self.fleet.refresh_status(self.name)
        self.fleet.changed(self.name, port)

    async def _connected(self) -> None:
        loops = [self._gpu_loop(), self._watch_loop(), self._http_loop()]
        loops += [self._journal_loop(s) for s in self.state.servers.values() if _journal_only(s)]
        tasks = [asyncio.create_task(c) for c in loops]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                task.result()
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self._followed.clear()

    def _lost(self) -> HostUnreachable:
        return HostUnreachable(self.name, self.ssh.last_error or "connection lost")

    # ------------------------------------------------------------------ GPUs

    async def _gpu_loop(self) -> None:
        period = self.host.gpu_interval_ms
        while True:
            stream = await self.ssh.stream(
                ["nvidia-smi", *gpu_query_args(GPU_QUERY_FIELDS, loop_ms=period)]
            )
            assembler = GpuStreamAssembler(GPU_QUERY_FIELDS)
            unreadable: deque[str] = deque(maxlen=5)  # what nvidia-smi said instead of GPU lines
            try:
                hung = await self._read_gpus(stream, assembler, unreadable, period)
                if not hung and stream.exit_status is None and not await self.ssh.still_connected():
                    raise self._lost()
                stderr = "" if hung else await stream.stderr_text()
            finally:
                await stream.close()
            if hung:
                await asyncio.sleep(5)  # a fresh stream, in case this one alone was stuck
                continue
            message = classify_nvidia_smi_error("\n".join(unreadable), stderr, stream.exit_status)
            if message is None and assembler.snapshots == 0:
                message = "nvidia-smi printed no GPU lines" + (
                    f" ({assembler.garbage} unreadable)" if assembler.garbage else ""
                )
            self._gpu_error(message or "nvidia-smi stopped")
            await asyncio.sleep(5)

    async def _read_gpus(
        self, stream, assembler: GpuStreamAssembler, unreadable: deque, period: int
    ) -> bool:
        """Lines into snapshots (the first period has no wrap to end it: a short pause does).
        True when nvidia-smi went silent (hung), False when the stream ended."""
        silent_after = max(5.0, 3 * period / 1000)
        lines = stream.__aiter__()
        upcoming: asyncio.Future | None = None
        try:
            while True:
                upcoming = upcoming or asyncio.ensure_future(lines.__anext__())
                first = bool(assembler.pending) and assembler.snapshots == 0
                done, _ = await asyncio.wait({upcoming}, timeout=0.3 if first else silent_after)
                if not done:
                    if first:
                        self._gpus(assembler.flush())
                        assembler = GpuStreamAssembler(
                            GPU_QUERY_FIELDS, expected_gpus=len(self.state.gpus)
                        )
                    else:
                        self._gpu_error(
                            f"nvidia-smi has printed nothing for {silent_after:g}s (hung?)"
                        )
                        return True
                    continue
                upcoming, finished = None, upcoming
                try:
                    line = finished.result()
                except StopAsyncIteration:
                    return False
                garbage = assembler.garbage
                snapshots = assembler.feed(line)
                if assembler.garbage > garbage:
                    unreadable.append(line)
                for snapshot in snapshots:
                    self._gpus(snapshot)
        finally:
            if upcoming is not None:
                upcoming.cancel()

    def _gpus(self, snapshot) -> None:
        self.state.gpus = snapshot
        self.state.gpu_time = time.time()
        self.state.gpu_error = None
        self._changed()

    def _gpu_error(self, message: str) -> None:
        if self.state.gpu_error != message:
            self.state.gpu_error = message
            self._changed()

    # --------------------------------------------------------------- watcher

    async def _watch_loop(self) -> None:
        while True:
            args = {
                "interval": self.watch_interval,
                "log_poll": self.log_poll,
                "follow": self._wanted_logs(),
            }
            stream = await self.ssh.stream(
                [self.host.python, "-c", source("watcher_agent"), json.dumps(args)]
            )
            self._followed = set(args["follow"])
            self._stream = stream
            async for line in stream:
                self._handle(line, stream)
            if stream.exit_status is None and not await self.ssh.still_connected():
                raise self._lost()
            stderr = (await stream.stderr_text()).strip()
            self.state.watcher_error = f"watcher ({self.host.python}) exited {stream.exit_status}: {stderr.splitlines()[-1] if stderr else 'no output'}"
            self._changed()
            await stream.close()
            await asyncio.sleep(10)

    def _wanted_logs(self) -> dict[str, dict]:
        wanted = {}
        for server in self.state.servers.values():
            if server.log_path:
                wanted[server.log_path] = self.offsets.get(server.log_path, {})
        return wanted

    def _handle(self, line: str, stream) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            return
        if not isinstance(message, dict):
            return
        handler = {
            "log": self._on_log,
            "procs": lambda m: self._on_procs(m, stream),
            "apps": self._on_apps,
            "log_state": self._on_log_state,
        }.get(message.get("t"))
        if handler is None:
            return
        try:
            handler(message)
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            # our own watcher never says this; a host that does is shown, not believed
            self.state.watcher_error = f"unexpected message from the watcher: {type(exc).__name__}"
            return
        self.state.watcher_error = None

    def _owner(self, path: str) -> ServerState | None:
        for server in self.state.servers.values():
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
        now = time.time()
        for text in _list(message.get("lines")):
            if isinstance(text, str):
                take_line(server, text, now)
        self._changed(server.port)

    def _on_log_state(self, message: dict) -> None:
        server = self._owner(message.get("path"))
        if server is None:
            return
        state = message.get("state")
        state = state if isinstance(state, str) else "unknown"
        server.log_state = state if state != "following" else None
        if state in ("rotated", "truncated"):
            server.log_lines.append(f"--- sglconsole: log {state}, following the new file ---")
        self._changed(server.port)

    def _on_apps(self, message: dict) -> None:
        if message.get("rc") == 0 and isinstance(message.get("out"), str):
            self.state.apps = parse_compute_apps(message["out"])
        self._reanalyse()

    def _on_procs(self, message: dict, stream) -> None:
        procs = [ProcInfo.from_json(p) for p in _list(message.get("procs")) if isinstance(p, dict)]
        self._procs = [p for p in procs if p is not None]
        self._reanalyse()
        self._follow_stdout(stream)

    def _reanalyse(self) -> None:
        view = analyse(self._procs, self.state.apps, self.state.gpus)
        self.state.view = view
        seen = set()
        for process in view.servers:
            seen.add(process.port)
            server = self.state.servers.get(process.port)
            if server is None:
                server = ServerState(self.name, process.port, None, None, None)
                self.state.servers[process.port] = server
            if server.process is None or server.process.main.pid != process.main.pid:
                self._new_server.set()
                server.new_process(process)  # a new pid starts with no numbers
                self._info_at.pop(process.port, None)
                self._ready_path.pop(process.port, None)
                self._alive_path.pop(process.port, None)
                self._no_metrics.discard(process.port)
            server.process = process
            if server.log_path is None and _is_file(process.main.stdout):
                server.log_path = process.main.stdout
        for port, server in list(self.state.servers.items()):
            if port not in seen:
                server.process = None
                server.health = None
                if not server.managed:
                    del self.state.servers[port]
        self._changed()

    def _follow_stdout(self, stream) -> None:
        wanted = {
            p: self.offsets.get(p, {}) for p in self._wanted_logs() if p not in self._followed
        }
        if wanted:
            self._followed |= set(wanted)
            try:
                stream.write(json.dumps({"follow": wanted}) + "\n")
            except Exception as exc:  # noqa: BLE001 - a closing channel: the reconnect will re-follow
                log.debug("%s: cannot ask the watcher to follow: %s", self.name, exc)

    # ---------------------------------------------------------------- journal

    async def _journal_loop(self, server: ServerState) -> None:
        """A systemd unit with no log file: `journalctl -fu UNIT`, resumed by cursor after a reconnect."""
        unit = server.config.systemd_unit
        while True:
            argv = ["journalctl", "-u", unit, "-f", "-o", "json", "--no-pager"]
            cursor = self._cursors.get(unit)
            argv += [f"--after-cursor={cursor}"] if cursor else ["-n", "200"]
            stream = await self.ssh.stream(argv)
            try:
                async for line in stream:
                    self._journal_line(server, unit, line)
                if stream.exit_status is None and not await self.ssh.still_connected():
                    raise self._lost()
                detail = (await stream.stderr_text()).strip().splitlines()
            finally:
                await stream.close()
            server.log_state = (
                f"journalctl exited {stream.exit_status}: {detail[-1] if detail else ''}".strip()
            )
            self._changed(server.port)
            await asyncio.sleep(10)

    def _journal_line(self, server: ServerState, unit: str, line: str) -> None:
        message, cursor = journal_entry(line)
        if cursor:
            self._cursors[unit] = cursor
        if message is None:
            return
        take_line(server, message, time.time())
        self._changed(server.port)

    # ------------------------------------------------------------------ HTTP

    async def _http_loop(self) -> None:
        while True:
            self._new_server.clear()
            servers = [s for s in self.state.servers.values() if s.process is not None]
            await asyncio.gather(*(self._poll_http(s) for s in servers))
            try:  # a server that just appeared is asked at once, not at the next interval
                await asyncio.wait_for(self._new_server.wait(), HTTP_INTERVAL_S)
            except TimeoutError:
                pass

    async def _poll_http(self, server: ServerState) -> None:
        address = server.config.http_address if server.config else "127.0.0.1"
        local = await self.ssh.forward(server.port, address)
        base = f"http://127.0.0.1:{local}"
        checked, health = await self._health(base, server)
        answer = server.health
        if checked:
            answer = (
                "ok"
                if health is not None and health.status_code == 200
                else _describe(health, server)
            )
        if answer == "ok" and server.port not in self._no_metrics:
            await self._metrics(
                base, server
            )  # before health is set: a one-shot status sees both or neither
        server.health = answer
        if answer == "ok":
            server.answered_at = time.time()
        if (
            server.health == "ok"
            and time.time() - self._info_at.get(server.port, 0) > INFO_REFRESH_S
        ):
            info = await self._server_info(base)
            if info is not None:
                server.server_info = info
                server.version = (
                    str(info.get("version")) if info.get("version") is not None else None
                )
                self._info_at[server.port] = time.time()
                if server.drift is None and server.managed:
                    await self._drift(server)
        self._changed(server.port)

    async def _metrics(self, base: str, server: ServerState) -> None:
        """SGLang's /metrics (only with --enable-metrics; a 404 is remembered for this process)."""
        response = await self._get(base + "/metrics")
        if response is None:
            return
        if response.status_code == 404:
            self._no_metrics.add(server.port)
        elif response.status_code == 200:
            server.metrics_before, server.metrics_before_at = server.metrics, server.metrics_at
            server.metrics = parse_metrics(response.text)
            server.metrics_at = time.time()

    async def _drift(self, server: ServerState) -> None:
        """Compare with the profile once per server process (the host's SGLang judges; it is not free)."""
        from sglconsole.config.launch_spec import profile_argv
        from sglconsole.remote.drift import report_from
        from sglconsole.remote.sglang_args import canonicalize_remote

        process, profile = server.process, server.profile
        if process is None or profile is None:
            return

        python = process.python or profile.python
        argvs = {"profile": profile_argv(profile, server.config), "running": list(process.args)}
        key = self.parser_cache.key(self.name, python, server.version, argvs)
        verdict = self.parser_cache.get(key) or await canonicalize_remote(self.ssh, python, argvs)
        self.parser_cache.put(key, verdict)
        if verdict.ok:
            server.drift = report_from(verdict, profile, server.config, process, server.server_info)
            server.drift_error = None
        else:
            server.drift_error = verdict.error

    async def _health(self, base: str, server: ServerState) -> tuple[bool, httpx.Response | None]:
        """(checked, response). /ready where the server has it (0.5.23+); else /health, which makes
        SGLang generate a token (and log a prefill line), so only until it answers 200 for this
        process — after that, a cheap /model_info proves the server still answers."""
        if self._ready_path.get(server.port) != "/health":
            response = await self._get(base + "/ready")
            if response is None or response.status_code != 404:
                self._ready_path[server.port] = "/ready"
                return True, response
            self._ready_path[server.port] = "/health"
        if server.health == "ok":
            alive = await self._alive(base, server.port)
            return (
                (False, None) if alive is not None and alive.status_code == 200 else (True, alive)
            )
        return True, await self._get(base + "/health")

    async def _alive(self, base: str, port: int) -> httpx.Response | None:
        """/model_info (0.5.10+); /get_model_info only where that is missing: from 0.5.10 on SGLang
        logs a deprecation warning for every /get_model_info call (seen on a real 0.5.12)."""
        path = self._alive_path.get(port, "/model_info")
        response = await self._get(base + path)
        if response is not None and response.status_code == 404 and path == "/model_info":
            self._alive_path[port] = "/get_model_info"
            response = await self._get(base + "/get_model_info")
        return response

    async def _server_info(self, base: str) -> dict | None:
        return await first_json(self._get, base, INFO_PATHS)

    async def _get(self, url: str) -> httpx.Response | None:
        try:
            return await self._http.get(url)
        except httpx.HTTPError:
            return None


def _describe(response: httpx.Response | None, server: ServerState) -> str:
    if response is None:
        return "no HTTP answer"
    if response.status_code == 503:
        return "starting (503)"
    return f"HTTP {response.status_code}"


def _journal_only(server: ServerState) -> bool:
    """Servers whose output only the journal has (a systemd unit without a configured log)."""
    return (
        server.config is not None
        and server.config.systemd_unit is not None
        and not server.config.log
    )


def journal_entry(line: str) -> tuple[str | None, str | None]:
    """(message, cursor) of one `journalctl -o json` line; MESSAGE may be a list of bytes."""
    try:
        entry = json.loads(line)
    except ValueError:
        return None, None
    if not isinstance(entry, dict):
        return None, None
    message = entry.get("MESSAGE")
    if isinstance(message, list):
        message = bytes(b for b in message if isinstance(b, int) and 0 <= b < 256).decode(
            "utf-8", "replace"
        )
    cursor = entry.get("__CURSOR")
    return (message if isinstance(message, str) else None), (
        cursor if isinstance(cursor, str) else None
    )


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _is_file(path: str | None) -> bool:
    return (
        bool(path)
        and path.startswith("/")
        and not path.startswith(("/dev/", "/proc/"))
        and "(deleted)" not in path
    )
