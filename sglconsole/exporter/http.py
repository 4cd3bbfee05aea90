"""A small HTTP/1.1 server on the monitor's own event loop: GET and HEAD of a few fixed paths, one
request per connection. Handlers run on the loop that writes the fleet, so a scrape never reads
it halfway through an update (no threads)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus

from sglconsole.core.deadline import within

log = logging.getLogger(__name__)

MAX_HEADER_BYTES = 16 * 1024
READ_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes
    content_type: str = "text/plain; charset=utf-8"


Handler = Callable[[Request], Response]


def parse_listen(text: str) -> tuple[str, int]:
    """'127.0.0.1:9464', '[::1]:9464', 'localhost:9464' or ':9464' (every address)."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--listen {text!r}: expected HOST:PORT (e.g. 127.0.0.1:9464)")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    return host, int(port)


async def serve(host: str, port: int, routes: dict[str, Handler]) -> asyncio.Server:
    async def on_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            request = await within(read_request(reader), READ_TIMEOUT_S)
            response = respond(request, routes)
            head = request is not None and request.method == "HEAD"
            writer.write(encode(response, head=head))
            await writer.drain()
        except (TimeoutError, ConnectionError):
            pass
        finally:
            writer.close()
            try:
                await writer.wait_closed()
            except ConnectionError:
                pass

    return await asyncio.start_server(on_connection, host or None, port, reuse_address=True)


async def read_request(reader: asyncio.StreamReader) -> Request | None:
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        return None
    if len(raw) > MAX_HEADER_BYTES:
        return None
    lines = raw.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        return None
    headers = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return Request(parts[0], parts[1].split("?", 1)[0], headers)


def respond(request: Request | None, routes: dict[str, Handler]) -> Response:
    if request is None:
        return Response(400, b"bad request\n")
    if request.method not in ("GET", "HEAD"):
        return Response(405, b"only GET and HEAD\n")
    handler = routes.get(request.path)
    if handler is None:
        return Response(404, ("not found; try " + ", ".join(routes) + "\n").encode())
    try:
        return handler(request)
    except Exception:  # noqa: BLE001 - a bug in one page must not stop the exporter
        log.exception("%s failed", request.path)
        return Response(500, b"internal error (see the exporter's log)\n")


def encode(response: Response, *, head: bool = False) -> bytes:
    reason = HTTPStatus(response.status).phrase
    lines = [
        f"HTTP/1.1 {response.status} {reason}",
        f"Content-Type: {response.content_type}",
        f"Content-Length: {len(response.body)}",
        "Connection: close",
        "",
        "",
    ]
    return "\r\n".join(lines).encode("latin-1") + (b"" if head else response.body)
