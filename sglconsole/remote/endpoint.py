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
        (trust_env=False): they would bypass the socket."""
        pool = {"limits": limits} if limits is not None else {}
        if self.socket is None:
            return httpx.AsyncClient(
                base_url=self.base_url,
                timeout=timeout,
                trust_env=False,
                verify=tls_context(trust_env=False),
                **pool,
            )
        transport = httpx.AsyncHTTPTransport(
            uds=self.socket, verify=tls_context(trust_env=True), **pool
        )
        return httpx.AsyncClient(
            base_url=self.base_url, timeout=timeout, trust_env=False, transport=transport
        )

    def __str__(self) -> str:
        return f"{self.base_url} via {self.socket}" if self.socket else self.base_url


@functools.cache
def tls_context(trust_env: bool) -> ssl.SSLContext:
    """The verifying TLS context every client shares, built once: httpx would build one per client
    (loading the CA bundle, ~30 ms: 2 s of a one-shot `status` on 64 servers), each the same as
    this (trust_env: whether SSL_CERT_FILE / SSL_CERT_DIR count, as httpx's own default)."""
    return httpx.create_ssl_context(trust_env=trust_env)


def forward_text(host: str, address: str, port: int) -> str:
    """What the `forward` stage of an action says it does."""
    return f"private local socket -> {address}:{port} on {host}"
