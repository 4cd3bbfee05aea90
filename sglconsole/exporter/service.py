"""`sglconsole exporter`: the monitor without a screen. One FleetMonitor, /metrics and /status
over HTTP, and the TUI's alerts (same tracker, same hysteresis) to hosts.yaml's alert_command
and to Alertmanager webhooks. It runs no action: nothing it does changes a host."""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import time
from collections.abc import Callable

from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

from sglconsole.actions.audit import AuditStops
from sglconsole.alerts import Alert, AlertTracker, run_alert_command, sweep
from sglconsole.alerts.tracker import HOLD_S, QUIET_S
from sglconsole.alerts.webhook import RESEND_S, Alertmanager
from sglconsole.config import Config
from sglconsole.exporter import STOP_S
from sglconsole.exporter.collector import FleetCollector
from sglconsole.exporter.http import Request, Response, serve
from sglconsole.exporter.restores import RestoreTimes
from sglconsole.remote.monitor import FleetMonitor, drift_pending
from sglconsole.state.json_view import fleet_json

log = logging.getLogger("sglconsole.exporter")

TICK_S = 1.0
"""How often statuses are derived again (time alone makes a server SLOW or STALLED) and alerts
swept, like `status --watch`."""


class Exporter:
    def __init__(
        self,
        config: Config,
        *,
        listen: tuple[str, int] = ("127.0.0.1", 9464),
        webhooks: list[str] | None = None,
        monitor: FleetMonitor | None = None,
        tick_s: float = TICK_S,
        hold_s: float = HOLD_S,
        quiet_s: float = QUIET_S,
        resend_s: float = RESEND_S,
        clock: Callable[[], float] = time.time,
    ):
        self.config = config
        self.listen = listen
        # always over SSH: a `source: prometheus` in hosts.yaml is read from this exporter
        self.monitor = monitor or FleetMonitor(config, use_source=False, stops=AuditStops())
        self.fleet = self.monitor.state
        self.tick_s = tick_s
        self.clock = clock
        self.tracker = AlertTracker(hold_s=hold_s, quiet_s=quiet_s, announce_first=True)
        self.webhook = Alertmanager(webhooks, resend_s=resend_s, clock=clock) if webhooks else None
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(
            FleetCollector(self.fleet, clock=clock, restores=RestoreTimes(fleet=config.identity))
        )
        self.server: asyncio.Server | None = None
        self.address: tuple[str, int] | None = None
        self._tasks: list[asyncio.Task] = []
        self._alert_tasks: set[asyncio.Task] = set()
        self._hosts_seen: dict[str, tuple[bool | None, str | None]] = {}

    # ------------------------------------------------------------- lifecycle

    async def start(self) -> tuple[str, int]:
        """Listen first (a taken port fails before any SSH), then start watching; the address."""
        routes = {"/metrics": self.metrics, "/status": self.status, "/": self.index}
        self.server = await serve(*self.listen, routes)
        self.address = address = self.server.sockets[0].getsockname()[:2]
        self.monitor.start()
        self._tasks.append(asyncio.create_task(self._tick(), name="exporter:tick"))
        if self.webhook is not None:
            self._tasks.append(asyncio.create_task(self.webhook.resend(), name="exporter:resend"))
        return address

    async def stop(self, budget_s: float = STOP_S) -> None:
        """Every part stops at once, all within one budget; a part still going then is named in
        the log and cancelled (an alert_command's process is killed)."""
        if self.server is not None:
            self.server.close()
        for task in self._tasks:
            task.cancel()
        parts = {"the exporter's own tasks": asyncio.gather(*self._tasks, return_exceptions=True)}
        if self.server is not None:  # a request being answered ends within its read timeout
            parts["the HTTP requests being answered"] = self.server.wait_closed()
        if self._alert_tasks:
            parts["alert_command runs"] = asyncio.wait(set(self._alert_tasks))
        if self.webhook is not None:
            parts["webhook posts"] = self.webhook.close()
        parts["the SSH sessions"] = self.monitor.stop()
        running = {asyncio.ensure_future(part): what for what, part in parts.items()}
        _, pending = await asyncio.wait(running, timeout=budget_s)
        for task in pending:
            log.warning("stopping: %s still going after %gs: cut short", running[task], budget_s)
            task.cancel()
        for task in self._alert_tasks:
            task.cancel()
        cancelled = [*pending, *self._alert_tasks]
        if cancelled:  # a moment to end as cancelled (an alert_command's process is killed)
            await asyncio.wait(cancelled, timeout=1)

    async def __aenter__(self) -> Exporter:
        await self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.stop()

    # ----------------------------------------------------------------- pages

    def metrics(self, request: Request) -> Response:
        encoder, content_type = choose_encoder(request.headers.get("accept", ""))
        return Response(200, encoder(self.registry), content_type)

    def status(self, request: Request) -> Response:
        """What `status --json` prints."""
        waiting = [server.key for server in self.fleet.all_servers() if drift_pending(server)]
        body = {**fleet_json(self.fleet, self.clock()), "drift_not_known": waiting}
        return Response(200, (json.dumps(body, indent=2) + "\n").encode(), "application/json")

    def index(self, request: Request) -> Response:
        text = "sglconsole exporter: /metrics (Prometheus), /status (the JSON of status --json)\n"
        return Response(200, text.encode())

    # ---------------------------------------------------------------- alerts

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(self.tick_s)
            try:
                self.tick()
            except Exception:  # noqa: BLE001 - a bug must not end the alerts for good
                log.exception("tick failed")

    def tick(self) -> None:
        now = self.clock()
        for name in self.fleet.hosts:
            self.fleet.publish(name, now)
        self._log_hosts()
        for alert in sweep(self.fleet, self.tracker, now):
            self.raise_alert(alert)

    def raise_alert(self, alert: Alert) -> None:
        word = "problem" if alert.problem else "recovered"
        log.warning(
            "alert %s: %s %s -> %s: %s",
            word,
            alert.target,
            alert.old.value,
            alert.what,
            alert.reason,
        )
        argv = self.config.model.alert_command
        if argv:
            task = asyncio.create_task(self._alert_command(argv, alert.to_json()))
            self._alert_tasks.add(task)
            task.add_done_callback(self._alert_tasks.discard)
        if self.webhook is not None:
            self.webhook.news(alert)

    async def _alert_command(self, argv: list[str], event: dict) -> None:
        problem = await run_alert_command(argv, event)
        if problem:
            log.warning("%s", problem)

    def _log_hosts(self) -> None:
        """A line when a host connects, drops or fails differently (the text is not a label)."""
        for name, host in self.fleet.hosts.items():
            now = (host.reachable, host.error)
            if self._hosts_seen.get(name) == now:
                continue
            self._hosts_seen[name] = now
            if host.reachable:
                log.info("%s: connected", name)
            elif host.reachable is False:
                log.warning("%s: unreachable: %s", name, host.error or "?")


async def run(
    config: Config,
    listen: tuple[str, int],
    webhooks: list[str],
    *,
    stop_s: float = STOP_S,
    **options,
) -> int:
    """Until SIGTERM or SIGINT; then stopping takes at most `stop_s` (and a second)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stop.set)
    exporter = Exporter(config, listen=listen, webhooks=webhooks, **options)
    host, port = await exporter.start()
    shown = f"[{host}]" if ":" in host else host
    log.info(
        "serving http://%s:%d/metrics and /status for %d hosts", shown, port, len(config.hosts)
    )
    try:
        await stop.wait()
    finally:
        log.info("stopping")
        began = time.monotonic()
        await exporter.stop(stop_s)
        log.info("stopped in %.1fs", time.monotonic() - began)
    return 0
