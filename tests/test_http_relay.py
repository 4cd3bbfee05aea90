"""The HTTP feed's relay (remote/relay.py and the host's agents/http_relay.py) through a real
OpenSSH sshd on loopback to simulated SGLang servers over real HTTP: it answers as the forward
does, a silent endpoint is a timeout of its own request only, the keep-alive race is asked once
more, and a relay that cannot run or dies is not the server's silence (the forward answers)."""

from __future__ import annotations

import asyncio
import os
import signal
import time

import httpx
import pytest

from sglconsole.remote.relay import HttpRelay, RelayClient
from sglconsole.remote.ssh.connection import SshHost
from tests.sim.test_keep_alive import host_with
from tests.sim.test_sim_server import free_port, model_args, servers, start  # noqa: F401
from tests.test_ssh import host


@pytest.fixture
async def ssh(sshd):
    conn = SshHost("a", host(sshd))
    yield conn
    await conn.close()


def relayed(relay: HttpRelay, ssh: SshHost, port: int, timeout: float = 5.0) -> RelayClient:
    async def forwarded() -> httpx.AsyncClient:
        return (await ssh.forward(port)).client(timeout=timeout)

    return RelayClient(relay, f"http://127.0.0.1:{port}", timeout, forwarded)


def serving(tmp_path, servers, *extra: str, **sglang):  # noqa: F811
    root = host_with(tmp_path, **sglang)
    server = start(servers, root, model_args(root, *extra))
    server.wait_ready()
    return server


async def test_the_relay_answers_as_the_forward_does(ssh, tmp_path, servers):  # noqa: F811
    server = serving(tmp_path, servers, "--enable-metrics")
    relay = HttpRelay(ssh, "python3")
    through_relay = relayed(relay, ssh, server.port)
    direct = (await ssh.forward(server.port)).client(timeout=5.0)
    try:
        for path in ("/model_info", "/v1/loads", "/no_such_path", "/metrics"):
            mine, theirs = await through_relay.get(path), await direct.get(path)
            assert (mine.status_code, mine.headers.get("content-type")) == (
                theirs.status_code,
                theirs.headers.get("content-type"),
            ), path
            if path == "/model_info":
                assert mine.json() == theirs.json()
        metrics = await through_relay.get("/metrics")
        assert metrics.headers["content-encoding"] == "gzip"  # as SGLang's prometheus_client
        assert "sglang:num_running_reqs" in metrics.text  # and read as text, unzipped
        assert relay.why is None and relay.pid is not None
    finally:
        await direct.aclose()
        await relay.close()


async def test_a_silent_endpoint_times_out_alone(ssh, tmp_path, servers):  # noqa: F811
    server = serving(tmp_path, servers, http="hang", http_paths=["/v1/loads"])
    relay = HttpRelay(ssh, "python3")
    client = relayed(relay, ssh, server.port, timeout=1.5)
    try:
        assert await relay.running()  # started before the clock: a loaded machine starts it slowly
        began = time.monotonic()
        silent = asyncio.ensure_future(client.get("/v1/loads"))
        await asyncio.sleep(0.2)
        assert (await client.get("/model_info")).status_code == 200  # not behind the silent one
        assert time.monotonic() - began < 1.0
        with pytest.raises(httpx.ReadTimeout):
            await silent
        assert 1.4 < time.monotonic() - began < 1.5 + 2.0
        with pytest.raises(httpx.ConnectError):  # nobody listens: the server's answer, not ours
            await relayed(relay, ssh, free_port(), timeout=2.0).get("/")
    finally:
        await relay.close()


async def test_a_get_whose_kept_connection_the_server_closes_is_asked_again(
    ssh,
    tmp_path,
    servers,  # noqa: F811
):
    server = serving(tmp_path, servers, keepalive_race=True)
    relay = HttpRelay(ssh, "python3")
    client = relayed(relay, ssh, server.port)
    try:
        for path in ("/model_info", "/v1/loads", "/model_info"):
            assert (await client.get(path)).status_code == 200, path
    finally:
        await relay.close()


async def test_without_a_relay_the_forward_answers(ssh, tmp_path, servers):  # noqa: F811
    server = serving(tmp_path, servers)
    relay = HttpRelay(ssh, "/nonexistent/python3")
    client = relayed(relay, ssh, server.port)
    try:
        assert (await client.get("/model_info")).status_code == 200
        assert relay.why and "nonexistent" in relay.why, relay.why
    finally:
        await relay.close()


async def test_a_relay_killed_on_the_host_is_not_the_servers_silence(
    ssh,
    tmp_path,
    servers,  # noqa: F811
):
    server = serving(tmp_path, servers, http="hang", http_paths=["/v1/loads"])
    relay = HttpRelay(ssh, "python3")
    client = relayed(relay, ssh, server.port, timeout=3.0)
    try:
        assert (await client.get("/model_info")).status_code == 200
        waiting = asyncio.ensure_future(client.get("/model_info?slow"))
        silent = asyncio.ensure_future(client.get("/v1/loads"))
        await asyncio.sleep(0.3)
        os.kill(relay.pid, signal.SIGKILL)
        assert (await waiting).status_code == 200
        with pytest.raises(httpx.ReadTimeout):  # asked again the other way: still silent
            await silent
        assert relay.why and "ended" in relay.why
        assert (await client.get("/model_info")).status_code == 200  # the forward meanwhile
    finally:
        await relay.close()


async def test_a_closed_relay_never_starts_again(ssh, tmp_path, servers):  # noqa: F811
    """A request of the connection before (a generating check still in flight) is not one for a
    new relay: after close() the forward answers, and no relay is started."""
    server = serving(tmp_path, servers)
    relay = HttpRelay(ssh, "python3")
    client = relayed(relay, ssh, server.port)
    assert (await client.get("/model_info")).status_code == 200
    first = relay.pid
    await relay.close()
    assert (await client.get("/model_info")).status_code == 200
    assert not await relay.running() and relay.pid == first


async def test_a_relay_closed_while_it_starts_is_not_left_running(ssh):
    """The feed closes its relay (its host let go) while the relay is still starting: the start
    ends with no relay and its stream closed, not a reader nobody will ever ask or close."""
    relay = HttpRelay(ssh, "python3")
    starting = asyncio.create_task(relay.running())
    await asyncio.sleep(0.01)  # the relay's SSH channel is being opened
    await relay.close()
    assert await starting is False
    assert relay._reader is None and relay._stream is None and not await relay.running()
