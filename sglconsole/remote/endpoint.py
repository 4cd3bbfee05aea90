"""Endpoint: where the console sends HTTP to one server or router, and the one place that builds
an HTTP client for it.

Through an SSH forward, every request goes through the forward's private UNIX socket (see
`forward_sockets`) and the URL only names the server as its host sees it
(``http://127.0.0.1:30000``: the Host header, and what messages show). A router given by `url:`
is reached directly.
"""

from __future__ import annotations

import functools
import ssl
from dataclasses import dataclass
from typing import Any

import httpx


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    """``http://ADDRESS:PORT`` as the server's host reaches it (or a router's direct `url:`)."""
    socket: str | None = None
    """The local end of the SSH forward every request goes through; None: direct."""

    @classmethod
    def forwarded(cls, address: str, port: int, socket: str) -> Endpoint:
        host = f"[{address}]" if ":" in address else address
        return cls(f"http://{host}:{port}", socket)

    def url(self, path: str) -> str:
        return self.base_url.rstrip("/") + path

    def client(self, timeout: Any, limits: httpx.Limits | None = None) -> httpx.AsyncClient:
        """An AsyncClient whose relative URLs go to this endpoint. Never the environment's proxies
        (trust_env=False): they would bypass the socket. Idle connections are kept KEEPALIVE_S."""
        pool = kept_alive(limits or httpx.Limits(max_connections=100, max_keepalive_connections=20))
        if self.socket is None:
            transport = OnceMore(verify=tls_context(trust_env=False), limits=pool)
        else:
            transport = OnceMore(uds=self.socket, verify=tls_context(trust_env=True), limits=pool)
        return httpx.AsyncClient(
            base_url=self.base_url, timeout=timeout, trust_env=False, transport=transport
        )

    def __str__(self) -> str:
        return f"{self.base_url} via {self.socket}" if self.socket else self.base_url


KEEPALIVE_S = 4.0
"""How long an idle connection is kept for the next request: less than SGLang's own 5 s (uvicorn's
timeout_keep_alive, SGLANG_TIMEOUT_KEEP_ALIVE), so a request is not sent on a connection the server
is closing. httpx's default, 5 s, raced it: against a real uvicorn closing at 5 s, a client asking
every 5 s lost 1 request in 30 to "Server disconnected without sending a response"."""


def kept_alive(limits: httpx.Limits) -> httpx.Limits:
    return httpx.Limits(
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=KEEPALIVE_S,
    )


class OnceMore(httpx.AsyncHTTPTransport):
    """A GET or HEAD whose connection closed or was reset before the answer is sent once more, on
    a new connection: the server closed a kept-alive connection as the request arrived (a real
    uvicorn answers that race with a reset or a close; its keep-alive can be set shorter than
    ours). Never a POST (it may have run), never a timeout (a wedged server's silence is the
    answer)."""

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        try:
            return await super().handle_async_request(request)
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError):
            if request.method not in ("GET", "HEAD"):
                raise
            return await super().handle_async_request(request)


@functools.cache
def tls_context(trust_env: bool) -> ssl.SSLContext:
    """The verifying TLS context every client shares, built once: httpx would build one per client
    (loading the CA bundle, ~30 ms: 2 s of a one-shot `status` on 64 servers), each the same as
    this (trust_env: whether SSL_CERT_FILE / SSL_CERT_DIR count, as httpx's own default)."""
    return httpx.create_ssl_context(trust_env=trust_env)


def forward_text(host: str, address: str, port: int) -> str:
    """What the `forward` stage of an action says it does."""
    return f"private local socket -> {address}:{port} on {host}"
