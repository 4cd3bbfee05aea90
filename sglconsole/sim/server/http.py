"""A small asyncio HTTP/1.1 server for the simulated SGLang server (stdlib only).

Simulated hosts run many servers; a dependency-free server keeps each one
light. Supports keep-alive, Content-Length bodies, and chunked streaming
responses (for SSE), which is all SGLang's clients use.
"""

from __future__ import annotations

import asyncio
import collections
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

REASONS = {
    200: "OK",
    400: "Bad Request",
    404: "Not Found",
    405: "Method Not Allowed",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes

    def json(self) -> object:
        return json.loads(self.body or b"{}")


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    stream: AsyncIterator[bytes] | None = None
    headers: dict[str, str] = field(default_factory=dict)


def json_response(data: object, status: int = 200) -> Response:
    return Response(status, json.dumps(data).encode())


def text_response(
    text: str, status: int = 200, content_type: str = "text/plain; charset=utf-8"
) -> Response:
    return Response(status, text.encode(), content_type)


Handler = Callable[[Request], Awaitable[Response]]


class HttpServer:
    def __init__(
        self,
        routes: dict[tuple[str, str], Handler],
        access_log: Callable[[str], None] | None = None,
        keep_alive_s: float | None = None,
        close_reused: bool = False,
    ):
        self.routes = routes
        self.keep_alive_s = keep_alive_s
        """uvicorn's timeout_keep_alive: a connection idle this long after an answer is closed."""
        self.close_reused = close_reused
        """The race a client loses against that close, every time: a request on a kept-alive
        connection is read and the connection closed without an answer (uvicorn's keep-alive
        timer firing as the request arrives)."""
        self.access_log = access_log  # uvicorn's access line per request, like SGLang's log has
        # SGLang's HTTP middleware counts: (method, path, status) answered, (method, path) open
        self.answered: collections.Counter[tuple[str, str, int]] = collections.Counter()
        self.active: collections.Counter[tuple[str, str]] = collections.Counter()
        self._server: asyncio.base_events.Server | None = None

    async def start(self, host: str, port: int) -> None:
        self._server = await asyncio.start_server(self._serve, host, port, reuse_address=True)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            answered = 0
            while True:
                idle_s = self.keep_alive_s if answered else None
                request = await _read_request(reader, idle_s)
                if request is None or (answered and self.close_reused):
                    break
                answered += 1
                self.active[request.method, request.path] += 1
                try:
                    response = await self._dispatch(request)
                finally:
                    self.active[request.method, request.path] -= 1
                self.answered[request.method, request.path, response.status] += 1
                if self.access_log is not None:
                    host, port = (writer.get_extra_info("peername") or ("127.0.0.1", 0))[:2]
                    self.access_log(
                        f'INFO:     {host}:{port} - "{request.method} {request.path} HTTP/1.1" '
                        f"{response.status} {REASONS.get(response.status, '')}"
                    )
                keep = request.headers.get("connection", "").lower() != "close"
                await _write_response(writer, response, keep)
                if not keep or response.stream is not None:
                    break
        except (
            ConnectionError,
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            ValueError,
        ):
            pass
        finally:
            writer.close()

    async def _dispatch(self, request: Request) -> Response:
        handler = self.routes.get((request.method, request.path))
        if handler is None:
            allowed = [method for (method, path) in self.routes if path == request.path]
            if allowed:
                return json_response({"detail": "Method Not Allowed"}, 405)
            return json_response({"detail": "Not Found"}, 404)
        try:
            return await handler(request)
        except (ValueError, KeyError, TypeError) as exc:
            return json_response({"error": {"message": f"{type(exc).__name__}: {exc}"}}, 400)


async def _read_request(reader: asyncio.StreamReader, idle_s: float | None) -> Request | None:
    """The next request; None at EOF, or when none began within IDLE_S (the keep-alive ran out)."""
    try:
        line = await asyncio.wait_for(reader.readline(), idle_s)
    except TimeoutError:
        return None
    if not line:
        return None
    method, target, _version = line.decode("latin-1").split(" ", 2)
    headers: dict[str, str] = {}
    while True:
        raw = await reader.readline()
        if raw in (b"\r\n", b"\n", b""):
            break
        name, _, value = raw.decode("latin-1").partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0") or 0)
    body = await reader.readexactly(length) if length else b""
    parts = urlsplit(target)
    return Request(method.upper(), parts.path, parse_qs(parts.query), headers, body)


async def _write_response(writer: asyncio.StreamWriter, response: Response, keep: bool) -> None:
    head = [
        f"HTTP/1.1 {response.status} {REASONS.get(response.status, 'Status')}",
        f"content-type: {response.content_type}",
    ]
    head += [f"{name}: {value}" for name, value in response.headers.items()]
    if response.stream is None:
        head.append(f"content-length: {len(response.body)}")
        head.append("connection: keep-alive" if keep else "connection: close")
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + response.body)
        await writer.drain()
        return
    head += ["transfer-encoding: chunked", "connection: close", "cache-control: no-cache"]
    writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
    try:
        async for chunk in response.stream:
            if chunk:
                writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                await writer.drain()  # raises once the client is gone
    finally:
        # now, not whenever it is collected: a stream whose client left ends its request (as
        # SGLang aborts it), instead of decoding to max_new_tokens for nobody
        await response.stream.aclose()
    writer.write(b"0\r\n\r\n")
    await writer.drain()
