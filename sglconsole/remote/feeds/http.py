"""The HTTP feed of one host: every running server's health, load, /metrics and server info,
polled every 5 s (a server that just appeared is asked at once; a quiet one every
QUIET_INTERVAL_S, and at once when its log shows work), and every GENERATE_EVERY_S a generating
health check that proves its scheduler works.

An HTTP answer proves only SGLang's HTTP process: a wedged scheduler keeps /model_info, /v1/loads
and /metrics answering with frozen values (state.liveness says what proves progress).

The polls go through the host's relay (remote/relay.py: one program on the host asks, one SSH
stream carries every request); where it cannot run, through the SSH port forward: one HTTP client
per forward socket (its connections are kept between polls), a socket replaced after a reconnect
gets a new client and the old one is closed."""

from __future__ import annotations

import asyncio
import time

import httpx

from sglconsole.core.deadline import within
from sglconsole.core.metrics import ServerMetrics, parse_metrics
from sglconsole.core.server_load import GET_LOAD, V1_LOADS, parse_load
from sglconsole.remote.endpoint import Endpoint
from sglconsole.remote.feeds.drift import DriftFeed
from sglconsole.remote.feeds.host_link import HostLink
from sglconsole.remote.inspect import INFO_PATHS, first_json
from sglconsole.remote.relay import HttpRelay, RelayClient
from sglconsole.state.fleet import ServerState
from sglconsole.state.model import GENERATE_BOUND_S

HTTP_INTERVAL_S = 5.0
POLL_TIMEOUT_S = 5.0  # one request of a poll (the generating check has its own)
QUIET_INTERVAL_S = 10.0
"""A server whose last load read says nothing in flight and whose log has shown no batch for an
interval is asked this often (the idle console's largest cost was asking idle servers): a batch
line in its log (`activity`) asks it at once, and its load stays within liveness.LOAD_FRESH_S."""
OWN_CHECK_S = 5.0
"""A batch line this soon after our generating check is that check's own, not work arriving."""
INFO_REFRESH_S = 60.0
GENERATE_EVERY_S = 15.0
"""How often /health makes the scheduler generate one token (each writes a prefill and an access
line into the server's log: often enough to see a wedge in seconds, rarely enough to stay quiet)."""
GENERATE_TIMEOUT_S = GENERATE_BOUND_S + 10
"""SGLang answers 503 itself after its 20 s health-check timeout: wait a little longer."""


class HttpFeed:
    def __init__(self, link: HostLink, drift: DriftFeed):
        self.link = link
        self.drift = drift
        self._clients: dict[int, tuple[Endpoint, httpx.AsyncClient]] = {}  # per port
        self.relay: HttpRelay | None = None
        """The polls' way to the servers: the host's own relay, one per connection (run() starts
        it; the forward where it cannot run)."""
        # per port, each forgotten when another process takes the port:
        self.info_at: dict[int, float] = {}
        self.ready_path: dict[int, str] = {}
        self.alive_path: dict[int, str] = {}
        self.load_path: dict[int, str | None] = {}  # None: neither load endpoint (load unknown)
        self.generate_at: dict[int, float] = {}  # when the last generating check was sent
        self._checks: dict[int, asyncio.Task] = {}
        self.no_metrics: set[int] = set()  # answered /metrics with 404 (no --enable-metrics)
        self.metrics_page: dict[int, tuple[str, ServerMetrics | None]] = {}
        """The last /metrics page parsed, and what it read: an idle server's page is the same
        page every poll (its numbers belong to this process: forgotten with it)."""
        self.new_server = asyncio.Event()
        """Set when a server must be asked before its turn: a new process, work in a quiet log."""
        self.due_at: dict[int, float] = {}  # per port: when it is asked next (monotonic)
        self.quiet: set[int] = set()  # ports asked every QUIET_INTERVAL_S until work shows

    async def close(self) -> None:
        for task in self._checks.values():
            task.cancel()
        clients, self._clients = self._clients, {}
        for _endpoint, client in clients.values():
            await client.aclose()
        if self.relay is not None:
            await self.relay.close()

    def new_process(self, port: int) -> None:
        """Another process serves PORT: what was learnt of the last one no longer holds."""
        self.new_server.set()
        self.info_at.pop(port, None)
        self.ready_path.pop(port, None)
        self.alive_path.pop(port, None)
        self.load_path.pop(port, None)
        self.generate_at.pop(port, None)
        self.no_metrics.discard(port)
        self.metrics_page.pop(port, None)
        self.due_at.pop(port, None)
        self.quiet.discard(port)

    def activity(self, port: int) -> None:
        """Its log wrote a batch line: a quiet server is asked now (its load, its metrics), not at
        its next turn. Our own generating check's batch line is not news."""
        asked = self.generate_at.get(port)
        if asked is not None and time.time() - asked < OWN_CHECK_S:
            return
        if port in self.quiet:  # a busy server keeps its 5 s turn: its lines are no news
            self.quiet.discard(port)
            self.due_at[port] = 0.0
            self.new_server.set()

    async def run(self) -> None:
        # a relay of this connection (the last one's ended with it), started while the watcher
        # finds the servers; a poll before it answers waits for it
        if self.relay is not None:
            await self.relay.close()
        self.relay = HttpRelay(self.link.ssh, self.link.host.python)
        starting = asyncio.create_task(self.relay.running())
        try:
            await self._poll_forever()
        finally:
            starting.cancel()

    async def _poll_forever(self) -> None:
        while True:
            self.new_server.clear()
            servers = [
                server for server in self.link.state.servers.values() if server.process is not None
            ]
            began = time.monotonic()
            due = [server for server in servers if self.due_at.get(server.port, 0.0) <= began]
            await asyncio.gather(*(self._poll(server) for server in due))
            for server in due:
                interval = self._interval(server)
                self.due_at[server.port] = began + interval
                if interval == QUIET_INTERVAL_S:
                    self.quiet.add(server.port)
                else:
                    self.quiet.discard(server.port)
            soonest = min((self.due_at[server.port] for server in servers), default=None)
            wait = HTTP_INTERVAL_S if soonest is None else soonest - time.monotonic()
            try:  # a server that just appeared is asked at once, not at the next interval
                await within(self.new_server.wait(), max(0.0, wait))
            except TimeoutError:
                pass

    @staticmethod
    def _interval(server: ServerState) -> float:
        """QUIET_INTERVAL_S for a server that answers, has nothing in flight and wrote no batch
        line for an interval; else HTTP_INTERVAL_S."""
        batch = server.batch_at[0] if server.batch_at is not None else None
        quiet = (
            server.health == "ok"
            and server.load is not None
            and not server.load.in_flight
            and (batch is None or time.time() - batch > HTTP_INTERVAL_S)
        )
        return QUIET_INTERVAL_S if quiet else HTTP_INTERVAL_S

    async def _poll(self, server: ServerState) -> None:
        http = self._relayed(server)
        checked, health = await self._health(http, server)
        answer = server.health
        if checked:
            healthy = health is not None and health.status_code == 200
            answer = "ok" if healthy else _describe(health)
        if answer == "ok" and server.port not in self.no_metrics:
            # before health is set: a one-shot status sees both or neither
            await self._metrics(http, server)
        server.health = answer
        if answer == "ok":
            server.answered_at = time.time()
        if checked and answer == "ok":  # unchecked: the load endpoint itself proved it answers
            await self._load(http, server)
        self._check_generates(http, server)
        stale = time.time() - self.info_at.get(server.port, 0) > INFO_REFRESH_S
        if server.health == "ok" and stale:
            info = await first_json(lambda path: self._get(http, path), INFO_PATHS)
            if info is not None:
                server.server_info = info
                version = info.get("version")
                server.version = str(version) if version is not None else None
                self.info_at[server.port] = time.time()
                if server.drift is None and server.managed:
                    await self.drift.check(server)
        self.link.publish(server.port)

    def _relayed(self, server: ServerState) -> RelayClient:
        assert self.relay is not None, "polled before run()"
        address = server.config.http_address if server.config else "127.0.0.1"

        async def forwarded() -> httpx.AsyncClient:
            endpoint = await self.link.ssh.forward(server.port, address)
            return await self._client(server.port, endpoint)

        base = Endpoint.forwarded(address, server.port, "").base_url
        return RelayClient(self.relay, base, POLL_TIMEOUT_S, forwarded)

    async def _client(self, port: int, endpoint: Endpoint) -> httpx.AsyncClient:
        known = self._clients.get(port)
        if known is not None and known[0] == endpoint:
            return known[1]
        if known is not None:
            await known[1].aclose()
        client = endpoint.client(timeout=httpx.Timeout(POLL_TIMEOUT_S))
        self._clients[port] = (endpoint, client)
        return client

    async def _metrics(self, http: RelayClient, server: ServerState) -> None:
        """SGLang's /metrics (only with --enable-metrics; a 404 is remembered for this process)."""
        response = await self._get(http, "/metrics")
        if response is None:
            return
        if response.status_code == 404:
            self.no_metrics.add(server.port)
        elif response.status_code == 200:
            server.take_page(self._parsed(server.port, response.text), time.time())

    def _parsed(self, port: int, text: str) -> ServerMetrics | None:
        """The page's samples; a page identical to the last one read on PORT is not parsed again
        (an idle server's counters stand still: parsing was the largest part of a poll)."""
        last = self.metrics_page.get(port)
        if last is not None and last[0] == text:
            return last[1]  # frozen: the same reading, taken again now
        parsed = parse_metrics(text)
        self.metrics_page[port] = (text, parsed)
        return parsed

    async def _health(
        self, http: RelayClient, server: ServerState
    ) -> tuple[bool, httpx.Response | None]:
        """(checked, response). /ready where the server has it (0.5.23+); else /health, which makes
        SGLang generate a token (and log a prefill line), so only until it answers 200 for this
        process — after that, a cheap /model_info proves the server still answers."""
        if self.ready_path.get(server.port) != "/health":
            response = await self._get(http, "/ready")
            if response is None or response.status_code != 404:
                self.ready_path[server.port] = "/ready"
                return True, response
            self.ready_path[server.port] = "/health"
        if server.health == "ok":
            alive = await self._load(http, server)
            answered = alive is not None and alive.status_code == 200
            return (False, None) if answered else (True, alive)
        _asks_a_token(server)
        return True, await self._get(http, "/health")

    async def _load(self, http: RelayClient, server: ServerState) -> httpx.Response | None:
        """Running and waiting requests from /v1/loads (0.5.9+); /get_load only where that is
        missing (it is deprecated from 0.5.10 and logs a warning per call, gone in 0.5.23); else
        /model_info proves only that HTTP answers. An answer that cannot be read leaves the load
        unknown, never 0."""
        port = server.port
        path = self.load_path.get(port, V1_LOADS)
        if path is None:
            return await self._alive(http, port)
        response = await self._get(http, path)
        if response is not None and response.status_code == 404:
            self.load_path[port] = GET_LOAD if path == V1_LOADS else None
            return await self._load(http, server)
        if response is None:
            return None  # no answer: what was read before ages out (state.liveness)
        load = None
        if response.status_code == 200:
            try:
                load = parse_load(path, response.json())
            except ValueError:
                load = None
        now = time.time()
        server.load, server.load_at = load, now if load is not None else server.load_at
        if load is None or not load.in_flight:
            server.busy_since = None
        elif server.busy_since is None:
            server.busy_since = now
        return response

    def _check_generates(self, http: RelayClient, server: ServerState) -> None:
        """In the background, a /health that generates a token, once the server has said it is
        ready (its ready line or a 200): at once for each process, then every GENERATE_EVERY_S
        while it writes no batch line (one that does proves its scheduler works: a busy server is
        not asked to generate, so its measured speed and accept rate stay its clients')."""
        port, process = server.port, server.process
        if process is None or (port in self._checks and not self._checks[port].done()):
            return
        ready = server.health == "ok" or (
            server.ready_seen_at is not None and server.ready_seen_at >= process.main.start - 1
        )
        now = time.time()
        asked = self.generate_at.get(port)
        if not ready or (asked is not None and now - asked < GENERATE_EVERY_S):
            return
        if asked is not None and server.batch_at is not None:
            when, writer = server.batch_at
            if writer in (None, process.main.pid) and now - when < GENERATE_EVERY_S:
                return
        self.generate_at[port] = now
        if server.generate_sent_at is None:  # the streak without a 200 starts here
            server.generate_sent_at = self.generate_at[port]
        _asks_a_token(server)
        self._checks[port] = asyncio.create_task(self._generate(http, server, process.main.pid))

    async def _generate(self, http: RelayClient, server: ServerState, pid: int) -> None:
        try:
            response = await http.get("/health", timeout=GENERATE_TIMEOUT_S)
        except httpx.HTTPError:
            response = None
        if server.process is None or server.process.main.pid != pid:
            return  # another process serves the port now: not its answer
        if response is not None and response.status_code == 200:
            server.generate_sent_at, server.generate_ok_at = None, time.time()
        self.link.publish(server.port)

    async def _alive(self, http: RelayClient, port: int) -> httpx.Response | None:
        """/model_info (0.5.10+); /get_model_info only where that is missing: from 0.5.10 on SGLang
        logs a deprecation warning for every /get_model_info call (seen on a real 0.5.12)."""
        path = self.alive_path.get(port, "/model_info")
        response = await self._get(http, path)
        if response is not None and response.status_code == 404 and path == "/model_info":
            self.alive_path[port] = "/get_model_info"
            response = await self._get(http, "/get_model_info")
        return response

    @staticmethod
    async def _get(client: RelayClient, path: str) -> httpx.Response | None:
        try:
            return await client.get(path)
        except httpx.HTTPError:
            return None


def _asks_a_token(server: ServerState) -> None:
    """A generating /health goes out: SGLang generates one token for it and counts it before it
    answers, so it is counted as the console's own as it is asked."""
    server.own_tokens += 1


def _describe(response: httpx.Response | None) -> str:
    if response is None:
        return "no HTTP answer"
    if response.status_code == 503:
        return "starting (503)"
    return f"HTTP {response.status_code}"
