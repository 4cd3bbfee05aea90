"""The canary feed of one host: every `canary.interval` each running server is asked the canary's
prompts (core.canary), one at a time, through the SSH port forward the HTTP feed uses.

Bounded cost, by rule: one run at a time per server, MAX_TOKENS greedy tokens per answer, a run
stops at its first answer that does not come; never while an action works on the server (this
console's, or any console's: its lock on the host is read, never taken — agents/lock_probe.py),
and skipped, with the reason kept, while the server already holds as many requests as its
--max-running-requests (the canary would only queue behind them). A server whose /health does not
say 200 is not asked: the HTTP feed says why.
"""

from __future__ import annotations

import asyncio
import json
import time

from sglconsole.config import Canary
from sglconsole.core import canary
from sglconsole.core.canary import CanaryAnswer
from sglconsole.remote.agents import source
from sglconsole.remote.canary_ask import CONNECT_S, ask_all
from sglconsole.remote.feeds.host_link import HostLink
from sglconsole.remote.load_reader import load_of
from sglconsole.state.canary import CanaryRun
from sglconsole.state.fleet import ServerState

LOOK_S = 5.0
"""At most this long between looks for a due run (a new server's first run waits no longer); a
run due sooner is waited for exactly: an idle console does not wake every second per host."""


def settings_of(server: ServerState) -> Canary:
    """The server's own `canary:`, else its profile's, else the defaults (every 300 s)."""
    own = server.config.canary if server.config is not None else None
    profile = server.profile.canary if server.profile is not None else None
    return own or profile or Canary()


def skip_reason(server: ServerState) -> str | None:
    """Why a due run must not ask the server now (None: ask)."""
    if server.action:
        return f"an action runs on it ({server.action})"
    limit = (server.server_info or {}).get("max_running_requests")
    load = server.load
    if isinstance(limit, int) and limit > 0 and load is not None and load.in_flight >= limit:
        return (
            f"saturated: {load.running} running and {load.waiting} waiting, "
            f"--max-running-requests {limit}"
        )
    return None


class CanaryFeed:
    def __init__(self, link: HostLink, *, enabled: bool = True):
        self.link = link
        self.enabled = enabled
        self._asked: dict[int, tuple[int, float]] = {}  # port -> (pid, when) of the last due run
        self._runs: dict[int, asyncio.Task] = {}

    async def run(self) -> None:
        try:
            while True:
                if self.enabled:
                    for server in list(self.link.state.servers.values()):
                        self._consider(server, time.time())
                await asyncio.sleep(self._until_due(time.time()))
        finally:
            for task in self._runs.values():
                task.cancel()

    def asking(self, port: int) -> bool:
        """Whether a run is asking the server on PORT now (its batch lines are ours)."""
        task = self._runs.get(port)
        return task is not None and not task.done()

    def _until_due(self, now: float) -> float:
        """Seconds until the soonest run is due, between 0.2 and LOOK_S."""
        waits = [LOOK_S]
        for server in self.link.state.servers.values():
            asked, interval = self._asked.get(server.port), settings_of(server).interval
            if asked is not None and interval > 0:
                waits.append(asked[1] + interval - now)
        return max(0.2, min(waits))

    def _consider(self, server: ServerState, now: float) -> None:
        settings = settings_of(server)
        process = server.process
        port = server.port
        if settings.interval <= 0 or process is None or server.health != "ok":
            return
        if port in self._runs and not self._runs[port].done():
            return  # one at a time
        pid = process.main.pid
        asked = self._asked.get(port)
        if asked is not None and asked[0] == pid and now - asked[1] < settings.interval:
            return
        self._asked[port] = (pid, now)
        reason = skip_reason(server)
        if reason is not None:
            server.canary.skipped = (now, reason)
            self.link.publish(port)
            return
        self._runs[port] = asyncio.create_task(self._ask(server, pid, settings, now))

    async def _ask(self, server: ServerState, pid: int, settings: Canary, began: float) -> None:
        address = server.config.http_address if server.config else "127.0.0.1"
        try:
            busy = await self._locked(server.port)
            endpoint = None if busy else await self.link.ssh.forward(server.port, address)
        except Exception as exc:  # noqa: BLE001 - the connection's own feeds report it
            busy = f"no SSH forward: {exc}"
        if busy is not None or endpoint is None:
            server.canary.skipped = (began, busy or "no SSH forward")
            self.link.publish(server.port)
            return

        def ours(answer: CanaryAnswer) -> None:  # its tokens are not the clients'
            if server.process is not None and server.process.main.pid == pid:
                server.own_tokens += answer.tokens or 0

        answers = await ask_all(endpoint, settings.timeout, ours)
        process = server.process
        if process is None or process.main.pid != pid:
            return  # another process serves the port now: not its answer
        if answers and answers[0].reason in ("HTTP 401", "HTTP 403"):  # --api-key: no verdict
            server.canary.skipped = (
                began,
                f"the server refuses it ({answers[0].reason}: an API key)",
            )
            self.link.publish(server.port)
            return
        changed = tuple(
            note
            for answer in answers
            if (note := self.link.fleet.answers.compare(server.profile_name, answer, server.key))
        )
        verdict = canary.worst([answer.verdict for answer in answers])
        reasons = [
            f"{one.prompt}: {one.reason}" for one in answers if one.verdict != "OK" and one.reason
        ]
        reason = "; ".join(reasons)
        if verdict == "TIMEOUT":  # what the server says now, not a reading taken mid-run
            load = (await load_of(endpoint, settings.timeout)).load
            if load is not None:
                reason += f"; the server says {load.running} running, {load.waiting} queued"
        server.canary.record(
            CanaryRun(
                time=began,
                pid=pid,
                verdict=verdict,
                reason=reason,
                answers=tuple(answers),
                health_ok=server.health == "ok",
                changed=changed,
            )
        )
        self.link.publish(server.port)

    async def _locked(self, port: int) -> str | None:
        """Who holds the server's action lock on the host now (None: nobody)."""
        argv = [self.link.host.python, "-c", source("lock_probe"), self.link.host.lock_file(port)]
        result = await self.link.ssh.run(argv, timeout=CONNECT_S)
        try:
            answer = json.loads(result.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):  # unknown is not "free": not asked, and said why
            return f"its action lock could not be read: {result.stderr.strip()[-120:] or '?'}"
        if not isinstance(answer, dict) or not answer.get("held"):
            return None
        holder = answer.get("holder") if isinstance(answer.get("holder"), dict) else {}
        who = f"{holder.get('user', '?')}@{holder.get('console', '?')}"
        return f"an action runs on it ({holder.get('action', 'an action')} by {who})"
