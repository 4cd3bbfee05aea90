"""The load a drain, a probe and the monitor see, asked over real HTTP of simulated SGLang
releases: 0.5.23 has no /get_load (its 404 once read as "0 running", so a drain cut live
requests), and an answer that cannot be read is unknown, never 0."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from sglconsole.core.server_load import GET_LOAD, V1_LOADS
from sglconsole.remote.endpoint import Endpoint
from sglconsole.remote.load_reader import load_of
from sglconsole.sim.host.root import create_host
from tests.sim.test_sim_server import Server

MODEL = "Qwen3-8B"


def start(tmp_path, version: str, **sglang) -> Server:
    root = create_host(
        tmp_path / version,
        gpu_model="H200",
        gpu_count=1,
        sglang_version=version,
        models=(MODEL,),
        sglang={"startup_s": 0.2, **sglang},
    )
    server = Server(root, ["--model-path", str(root / "models" / MODEL)], {"HOME": str(root)})
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(server.url + "/health", timeout=5).status_code == 200:
                return server
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError(server.text()[-2000:])


@pytest.mark.parametrize("version", ["0.5.23", "0.5.17"])
def test_a_busy_server_reports_its_requests_from_v1_loads(tmp_path, version):
    server = start(tmp_path, version, load={"concurrency": 3, "max_tokens": 400})
    try:
        if version == "0.5.23":  # the route is gone: what the old drain summed to 0
            assert httpx.get(server.url + GET_LOAD, timeout=5).status_code == 404
        deadline = time.monotonic() + 10
        while True:
            answer = asyncio.run(load_of(Endpoint(server.url)))
            if answer.load is not None and answer.load.in_flight >= 3:
                break
            assert time.monotonic() < deadline, answer
            time.sleep(0.2)
        assert answer.load.source == V1_LOADS
        assert "Endpoint '/get_load' is deprecated" not in server.text()  # nothing deprecated asked
    finally:
        server.proc.kill()


def test_no_answer_and_no_route_are_unknown(tmp_path):
    server = start(tmp_path, "0.5.23", http="wrong_json")
    try:
        answer = asyncio.run(load_of(Endpoint(server.url)))
        assert answer.load is None and answer.answered and "unreadable" in answer.why
    finally:
        server.proc.kill()
    gone = asyncio.run(load_of(Endpoint(server.url), timeout=2))
    assert gone.load is None and not gone.answered
