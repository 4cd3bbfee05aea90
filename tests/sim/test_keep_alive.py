"""Kept-alive connections as SGLang's uvicorn keeps them: closed after SGLANG_TIMEOUT_KEEP_ALIVE
idle, and the race a client loses when that close meets its next request. The console's clients
(remote/endpoint.py) must not lose a reading to it: a GET is asked again on a new connection."""

from __future__ import annotations

import socket
import time

import httpx
import pytest

from sglconsole.remote.endpoint import Endpoint
from sglconsole.sim.host.root import create_host
from tests.sim.test_sim_server import MODEL, model_args, servers, start  # noqa: F401

REQUEST = b"GET /model_info HTTP/1.1\r\nHost: x\r\n\r\n"


def host_with(tmp_path, **sglang):
    return create_host(
        tmp_path / "h",
        gpu_model="A6000",
        gpu_count=4,
        models=(MODEL,),
        sglang={"startup_s": 0.3, **sglang},
    )


def answer(sock: socket.socket) -> bytes:
    """One response (its body read by its content-length); b"" when the server closed."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
    while len(body) < length:
        body += sock.recv(65536)
    return head


def test_an_idle_connection_is_closed_after_sglangs_keep_alive(tmp_path, servers):  # noqa: F811
    root = host_with(tmp_path)
    server = start(servers, root, model_args(root), env={"SGLANG_TIMEOUT_KEEP_ALIVE": "1"})
    server.wait_ready()
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
        sock.sendall(REQUEST)
        assert answer(sock).startswith(b"HTTP/1.1 200")
        time.sleep(0.5)  # within the keep-alive: the same connection answers again
        sock.sendall(REQUEST)
        assert answer(sock).startswith(b"HTTP/1.1 200")
        time.sleep(1.5)  # idle past SGLANG_TIMEOUT_KEEP_ALIVE: uvicorn closes it
        assert sock.recv(1) == b""


@pytest.fixture
def racing(tmp_path, servers):  # noqa: F811
    root = host_with(tmp_path, keepalive_race=True)
    server = start(servers, root, model_args(root))
    server.wait_ready()
    return server


async def test_a_get_whose_connection_the_server_closes_is_asked_again(racing):
    async with httpx.AsyncClient(base_url=racing.url, trust_env=False) as plain:
        assert (await plain.get("/model_info")).status_code == 200
        with pytest.raises(httpx.RemoteProtocolError):  # the race, lost by a bare client
            await plain.get("/v1/loads")
    async with Endpoint(racing.url).client(timeout=5.0) as client:
        for path in ("/model_info", "/v1/loads", "/model_info"):
            assert (await client.get(path)).status_code == 200, path


async def test_a_post_is_never_sent_twice(racing):
    async with Endpoint(racing.url).client(timeout=5.0) as client:
        assert (await client.get("/model_info")).status_code == 200
        with pytest.raises(httpx.RemoteProtocolError):  # it may have run: the caller decides
            await client.post("/generate", json={"text": "2 + 2 =", "sampling_params": {}})
