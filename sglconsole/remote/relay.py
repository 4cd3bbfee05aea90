"""The console's end of one host's HTTP relay (agents/http_relay.py): the HTTP feed's polls asked
by a program on the host over one SSH stream, a JSON line each way, instead of an SSH channel, a
local socket and an HTTP client stack per request through the forward (what an idle console's
request cost: 0.8 ms of CPU on a kept connection, 1.65 ms on a new one).

The answers are httpx's own Response objects and errors, so what reads them is the same for both
ways. A relay that cannot start (no Python there) or ends is not the server's silence: the request
goes through the forward instead, and the relay is tried again after RETRY_S.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import time
from collections.abc import Awaitable, Callable

import httpx

from sglconsole.core.deadline import within
from sglconsole.errors import RemoteError
from sglconsole.remote.agents import source
from sglconsole.remote.endpoint import KEEPALIVE_S
from sglconsole.remote.ssh.connection import SshHost
from sglconsole.remote.ssh.stream import RemoteStream

START_S = 10.0  # its hello line, at most (a Python start on a loaded host)
RETRY_S = 60.0  # after a relay could not start or ended: the forward meanwhile
SLACK_S = 2.0  # past a request's own timeout: the relay itself is stuck
ERRORS: dict[str, type[httpx.TransportError]] = {
    "timeout": httpx.ReadTimeout,
    "connect": httpx.ConnectError,
    "closed": httpx.RemoteProtocolError,
}


class RelayGone(Exception):
    """The relay is not running (it could not start, or it ended): not the server's answer."""


class HttpRelay:
    def __init__(self, ssh: SshHost, python: str):
        self.ssh = ssh
        self.python = python
        self._stream: RemoteStream | None = None
        self._reader: asyncio.Task | None = None
        self._starting = asyncio.Lock()
        self._waiting: dict[int, asyncio.Future] = {}
        self._ids = itertools.count(1)
        self._closed = False
        self.pid: int | None = None  # the relay's on its host (its hello says)
        self.failed_at: float | None = None
        self.why: str | None = None
        """Why the relay is not used (its last start or end), for whoever asks."""

    async def running(self) -> bool:
        """Whether requests can go through the relay now (started on first use; never again once
        closed: a request of the connection before is not one for a new relay)."""
        if self._reader is not None and not self._reader.done():
            return True
        if self._closed:
            return False
        if self.failed_at is not None and time.monotonic() - self.failed_at < RETRY_S:
            return False
        async with self._starting:
            if self._reader is not None and not self._reader.done():
                return True
            return not self._closed and await self._start()

    async def _start(self) -> bool:
        argv = [self.python, "-c", source("http_relay"), json.dumps({"keep_alive_s": KEEPALIVE_S})]
        try:
            stream = await self.ssh.stream(argv)
        except RemoteError as exc:
            return self._failed(exc.message)
        lines = stream.batches()
        try:
            first = await within(lines.__anext__(), START_S)
            hello = json.loads(first[0])
            if hello.get("t") != "relay":
                raise ValueError(first[0][:200])
        except (StopAsyncIteration, TimeoutError, ValueError, IndexError, RemoteError) as exc:
            said = (await stream.stderr_text()).strip().splitlines()
            await stream.close()
            return self._failed(said[-1] if said else f"no hello ({type(exc).__name__})")
        if self._closed:  # closed while it started: a relay nobody would ask, or close
            await stream.close()
            return False
        self._stream, self.failed_at, self.why = stream, None, None
        self.pid = hello.get("pid")
        self._reader = asyncio.create_task(self._read(stream, lines, first[1:]))
        return True

    def _failed(self, why: str) -> bool:
        self.failed_at, self.why = time.monotonic(), why
        return False

    async def _read(self, stream: RemoteStream, lines, first: list[str]) -> None:
        try:
            self._answer(first)
            async for batch in lines:
                self._answer(batch)
            self._failed(f"it ended ({stream.exit_status})")
        except RemoteError as exc:
            self._failed(exc.message)
        finally:
            waiting, self._waiting = self._waiting, {}
            for future in waiting.values():
                if not future.done():
                    future.set_exception(RelayGone(self.why or "ended"))
            await stream.close()

    def _answer(self, lines: list[str]) -> None:
        for line in lines:
            try:
                answer = json.loads(line)
                future = self._waiting.pop(answer["i"], None)
            except (ValueError, KeyError, TypeError):
                continue  # not an answer: nobody waits for it
            if future is not None and not future.done():
                future.set_result(answer)

    async def get(self, url: httpx.URL, timeout: float) -> httpx.Response:
        """GET URL (as the host reaches it) through the relay: httpx's Response, or its error
        when the server did not answer; RelayGone when the relay itself did not."""
        stream = self._stream
        if stream is None or self._reader is None or self._reader.done():
            raise RelayGone(self.why or "not started")
        number = next(self._ids)
        future = asyncio.get_running_loop().create_future()
        self._waiting[number] = future
        request = {"i": number, "a": url.host, "p": url.port, "u": url.raw_path.decode()}
        request["t"] = timeout
        try:
            stream.write(json.dumps(request, separators=(",", ":")) + "\n")
            answer = await within(future, timeout + SLACK_S)
        except TimeoutError:
            raise httpx.ReadTimeout(f"the relay gave no answer in {timeout + SLACK_S:g}s") from None
        except OSError as exc:
            raise RelayGone(str(exc)) from None
        finally:
            self._waiting.pop(number, None)
        request = httpx.Request("GET", url)
        if "e" in answer:
            error = ERRORS.get(answer["e"], httpx.ConnectError)
            raise error(str(answer.get("w", "")), request=request)
        try:
            return httpx.Response(
                int(answer["s"]),
                headers=answer.get("h") or [],
                content=base64.b64decode(answer.get("b") or "", validate=True),
                request=request,
            )
        except (KeyError, TypeError, ValueError) as exc:  # an answer we cannot read: unknown
            why = f"unreadable relay answer: {exc}"
            raise httpx.RemoteProtocolError(why, request=request) from None

    async def close(self) -> None:
        self._closed = True
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.cancel()
            await asyncio.gather(reader, return_exceptions=True)
        self._stream = None


class RelayClient:
    """What the HTTP feed asks one server through: the relay while it runs, else FORWARDED (an
    httpx client through the SSH forward), with the same answers and errors."""

    def __init__(
        self,
        relay: HttpRelay,
        base_url: str,
        timeout: float,
        forwarded: Callable[[], Awaitable[httpx.AsyncClient]],
    ):
        self.relay = relay
        self.base_url = httpx.URL(base_url)
        self.timeout = timeout
        self.forwarded = forwarded

    async def get(self, path: str, timeout: float | None = None) -> httpx.Response:
        timeout = self.timeout if timeout is None else timeout
        if await self.relay.running():
            try:
                return await self.relay.get(self.base_url.join(path), timeout)
            except RelayGone:
                pass  # not the server's answer: ask it the other way
        client = await self.forwarded()
        return await client.get(path, timeout=timeout)

    async def aclose(self) -> None:
        """The relay and the forward's client belong to the feed, not to one server."""
