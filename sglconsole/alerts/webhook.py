"""Alerts to Alertmanager (or anything that takes its v2 API): `POST /api/v2/alerts` with a JSON
list of {labels, annotations, startsAt, endsAt}.

A problem fires an alert named after the status (SglconsoleSlow, SglconsoleDown, ...) for its
host (and port); the recovery sends it again with endsAt = now (resolved). A worse problem on the
same server resolves the one before. Like Prometheus, firing alerts are sent again every
`resend_s` with endsAt a few periods ahead, so they expire by themselves if the exporter dies."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime
from urllib.parse import urlsplit

import httpx

from sglconsole.alerts.precursors import ALERT_NAMES
from sglconsole.alerts.tracker import Alert
from sglconsole.state.model import Status
from sglconsole.state.statuses import INFO

log = logging.getLogger(__name__)

API_PATH = "/api/v2/alerts"
RESEND_S = 60.0
TIMEOUT_S = 10.0


def alert_url(url: str) -> str:
    """An Alertmanager's base URL gets its v2 path; a URL with a path is used as given."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"--webhook {url!r}: expected an http(s) URL")
    return url.rstrip("/") + API_PATH if parts.path in ("", "/") else url


def alert_name(status: Status) -> str:
    return INFO[status].alert_name


def iso(when: float) -> str:
    return (
        datetime.fromtimestamp(when, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    )


def labels(host: str, port: int | None, status: Status) -> dict[str, str]:
    out = {
        "alertname": alert_name(status),
        "severity": INFO[status].severity,
        "status": status.value,
        "host": host,
        "source": "sglconsole",
    }
    if port is not None:
        out["port"] = str(port)
        out["server"] = f"{host}:{port}"
    return out


class Alertmanager:
    """Holds the alerts firing now and posts every change to each URL."""

    def __init__(
        self,
        urls: list[str],
        *,
        resend_s: float = RESEND_S,
        timeout: float = TIMEOUT_S,
        clock: Callable[[], float] = time.time,
    ):
        self.urls = [alert_url(url) for url in urls]
        self.resend_s = resend_s
        self.clock = clock
        self.client = httpx.AsyncClient(timeout=timeout)
        self.firing: dict[tuple, dict] = {}
        """(host, port) for a status, (host, port, router) for a place in a router,
        (host, port, "canary", signal) for the canary and SGLang's warnings."""
        self._unsent: list[dict] = []  # resolutions that did not get through: again at the resend
        self._tasks: set[asyncio.Task] = set()
        self._order = asyncio.Lock()  # posts leave in the order of the news (FIFO)

    def news(self, alert: Alert) -> None:
        """Feed what the tracker said; the posts run in the background."""
        key = (alert.host, alert.port) + ((alert.router,) if alert.router else ())
        key += ("canary", alert.signal or "") if alert.canary is not None else ()
        key += ("sign", alert.sign) if alert.sign else ()
        batch = []
        before = self.firing.pop(key, None)
        if before is not None:
            batch.append(resolved(before, alert.time))
        if alert.problem:
            firing = {
                "labels": labels(alert.host, alert.port, alert.new),
                "annotations": {
                    "summary": f"{alert.target} is {alert.new.value} (was {alert.old.value})",
                    "description": alert.reason,
                },
            }
            if alert.router:  # its place in a router, not its status (alerts.routes)
                firing["labels"] |= {
                    "alertname": "SglconsoleRouting",
                    "router": alert.router,
                    "routing": alert.routing or "",
                }
                firing["annotations"]["summary"] = f"{alert.target}: {alert.reason}"
            if alert.canary is not None:  # its answers, not its status (alerts.canary)
                name = "SglconsoleSglangWarning" if alert.signal else "SglconsoleCanary"
                firing["labels"] |= {"alertname": name, "canary": alert.canary}
                firing["labels"]["severity"] = (
                    "warning" if alert.canary in ("CHANGED", "NAN_LOGITS") else "critical"
                )
                firing["annotations"]["summary"] = f"{alert.target}: {alert.reason}"
            if alert.sign:  # a sign before an outage, not its status (alerts.precursors)
                firing["labels"] |= {"alertname": ALERT_NAMES[alert.sign], "sign": alert.sign}
                firing["labels"]["severity"] = (
                    "critical" if alert.sign in ("xid", "oom_kill") else "warning"
                )
                firing["annotations"]["summary"] = f"{alert.target}: {alert.reason}"
            firing["startsAt"] = iso(alert.time)
            self.firing[key] = firing
            batch.append(self._fire(firing))
        if batch:
            self._spawn(self._send(batch))

    async def _send(self, batch: list[dict]) -> None:
        async with self._order:
            await self.post(batch)

    def _fire(self, alert: dict) -> dict:
        return {**alert, "endsAt": iso(self.clock() + 4 * self.resend_s)}

    async def resend(self) -> None:
        """Forever: every `resend_s`, what still fires (and resolutions not yet delivered)."""
        while True:
            await asyncio.sleep(self.resend_s)
            async with self._order:  # what fires as of now, never a stale copy after its end
                batch, self._unsent = self._unsent, []
                batch += [self._fire(alert) for alert in self.firing.values()]
                if batch:
                    await self.post(batch)

    async def post(self, batch: list[dict]) -> bool:
        delivered = True
        for url in self.urls:
            try:
                reply = await self.client.post(url, json=batch)
                reply.raise_for_status()
            except httpx.HTTPError as exc:
                delivered = False
                log.warning("webhook %s: %s", url, exc or type(exc).__name__)
        if not delivered:  # what fires is sent again anyway; a resolution only if kept
            firing = [alert["labels"] for alert in self.firing.values()]
            self._unsent += [
                alert
                for alert in batch
                if alert["labels"] not in firing and alert not in self._unsent
            ]
        return delivered

    def _spawn(self, coro) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=TIMEOUT_S)
        await self.client.aclose()


def resolved(alert: dict, when: float) -> dict:
    return {**alert, "endsAt": iso(when)}
