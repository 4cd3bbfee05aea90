"""The simulated SGLang misbehaves like real 0.5.17 did on an H200: a wedged scheduler
(host setting `scheduler_stall`, read live; `jit_stall_s`, flashinfer's one-time sampling JIT),
long logs (`log_history_lines`, `--decode-log-interval`), several lifetimes appended to one log.
Everything over real HTTP against a real simulated server process."""

from __future__ import annotations

import json
import os
import re
import signal
import threading
import time
from pathlib import Path

import httpx
import pytest

from sglconsole.sim.gpustate import pid_alive
from sglconsole.sim.host.detach import start_detached
from sglconsole.sim.host.root import create_host, path_env
from tests.sim.test_sim_server import Server, free_port

VERSION = "0.5.17"
MODEL = "Qwen3-8B"
ARGS = ["--speculative-algorithm", "NGRAM", "--speculative-num-draft-tokens", "8"]
BATCH_LINE = re.compile(r"\] (Decode|Prefill) batch")
FAILED = re.compile(
    r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] Health check failed\. Server couldn't get a response "
    r"from detokenizer for last (\d+) seconds\. tic start time: \d\d:\d\d:\d\d\. "
    r"last_heartbeat time: \d\d:\d\d:\d\d$",
    re.M,
)
ANSWER_AT_ONCE = ["model_info", "get_model_info", "v1/models", "get_load", "metrics"]
# /v1/loads too: on the real H200 it answered only after the 77 s stall (its access lines came then)
NO_ANSWER = ["health", "health_generate", "server_info", "get_server_info", "v1/loads"]


def _host(tmp_path: Path, **sglang) -> Path:
    return create_host(
        tmp_path / "h",
        gpu_model="H200",
        gpu_count=1,
        sglang_version=VERSION,
        models=(MODEL,),
        sglang={"startup_s": 0.3, **sglang},
    )


def _set(root: Path, **values) -> None:
    """Change the host's sglang settings while the server runs (as a test of the console would)."""
    path = root / "sim" / "host.json"
    data = json.loads(path.read_text())
    data.setdefault("sglang", {}).update(values)
    path.write_text(json.dumps(data))


def _start(root: Path, *extra: str) -> Server:
    server = Server(
        root,
        ["--model-path", str(root / "models" / MODEL), "--enable-metrics", *ARGS, *extra],
        {"CUDA_VISIBLE_DEVICES": "0", "HOME": str(root)},
    )
    _wait_healthy(server)
    return server


def _wait_healthy(server: Server, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert server.proc.poll() is None, server.text()[-3000:]
        try:
            if httpx.get(server.url + "/health", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError("not healthy:\n" + server.text()[-3000:])


def _batch_lines(server: Server) -> int:
    return len(BATCH_LINE.findall(server.text()))


def _wait_for(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _frozen_view(answer: httpx.Response, path: str) -> object:
    """What must not move while the scheduler is wedged (timestamps aside)."""
    if path == "get_load":
        return [{k: v for k, v in row.items() if k != "ts_tic"} for row in answer.json()]
    if path == "v1/loads":
        return [
            {k: v for k, v in row.items() if k != "timestamp"} for row in answer.json()["loads"]
        ]
    if path == "metrics":
        # the HTTP middleware's and the CPU monitor's families live outside the scheduler
        outside = ("sglang:http_", "sglang:process_cpu_seconds")
        return sorted(
            line
            for line in answer.text.splitlines()
            if not line.startswith("#") and not line.startswith(outside)
        )
    return answer.json()


def test_a_wedged_scheduler_freezes_progress_while_memory_endpoints_answer(tmp_path):
    root = _host(tmp_path, health_timeout_s=3, load={"concurrency": 4, "max_tokens": 400})
    server = _start(root, "--decode-log-interval", "1")
    try:
        _wait_for(lambda: _batch_lines(server) > 5, 10, "decode lines under load")
        _set(root, scheduler_stall=True)
        time.sleep(1.0)  # read live within ~0.5 s
        before = _batch_lines(server)
        first = {}
        for path in ANSWER_AT_ONCE:
            started = time.monotonic()
            answer = httpx.get(f"{server.url}/{path}", timeout=5)
            assert answer.status_code == 200 and time.monotonic() - started < 1.0, path
            first[path] = _frozen_view(answer, path)
        assert first["get_load"][0]["num_reqs"] == 4  # the requests in flight, frozen
        for path in NO_ANSWER:
            with pytest.raises(httpx.TimeoutException):
                httpx.get(f"{server.url}/{path}", timeout=2)
        for path in ANSWER_AT_ONCE:  # still the same values, seconds later
            assert _frozen_view(httpx.get(f"{server.url}/{path}", timeout=5), path) == first[path]
        assert _batch_lines(server) == before  # no Decode/Prefill line while wedged
        started = time.monotonic()
        assert httpx.get(f"{server.url}/health", timeout=10).status_code == 503
        assert 2.9 < time.monotonic() - started < 5
        failures = FAILED.findall(server.text())
        assert failures and set(failures) == {"3"}
        _set(root, scheduler_stall=False)
        _wait_for(lambda: _batch_lines(server) > before + 5, 5, "decode lines after the stall")
        assert httpx.get(f"{server.url}/server_info", timeout=5).status_code == 200
        assert httpx.get(f"{server.url}/health", timeout=5).status_code == 200
    finally:
        server.stop()


def test_requests_in_flight_resume_when_the_stall_ends(tmp_path):
    root = _host(tmp_path)
    server = _start(root)
    try:
        _set(root, scheduler_stall=True)
        time.sleep(1.0)
        answers = {}

        def generate() -> None:
            answers["started"] = time.monotonic()
            answers["response"] = httpx.post(
                f"{server.url}/generate",
                json={"text": "hello", "sampling_params": {"max_new_tokens": 32}},
                timeout=30,
            )
            answers["done"] = time.monotonic()

        worker = threading.Thread(target=generate)
        worker.start()
        time.sleep(2.0)
        assert "response" not in answers  # no token while wedged
        _set(root, scheduler_stall=False)
        worker.join(15)
        assert answers["response"].status_code == 200
        assert answers["response"].json()["meta_info"]["completion_tokens"] == 32
    finally:
        server.stop()


def _sampled(server: Server, top_p: float | None) -> float:
    params = {"max_new_tokens": 4}
    if top_p is not None:
        params.update(temperature=0.7, top_p=top_p)
    started = time.monotonic()
    answer = httpx.post(
        f"{server.url}/generate", json={"text": "hi", "sampling_params": params}, timeout=30
    )
    assert answer.status_code == 200
    return time.monotonic() - started


def test_first_flashinfer_sampled_request_wedges_a_fresh_host_once(tmp_path):
    root = _host(tmp_path, jit_stall_s=3)
    server = _start(root)
    try:
        assert _sampled(server, None) < 1.5  # plain temperature sampling: no flashinfer kernel
        assert _sampled(server, 0.9) > 2.9  # top_p: flashinfer JIT-compiles its sampling module
        assert (root / ".cache" / "flashinfer").is_dir()
        assert _sampled(server, 0.9) < 1.5
    finally:
        server.stop()
    again = _start(root)  # the same host: its JIT cache is there now
    try:
        assert _sampled(again, 0.9) < 1.5
    finally:
        again.stop()


def test_log_history_lines_put_the_lifetime_start_far_back(tmp_path):
    root = _host(tmp_path, log_history_lines=2000)
    started = time.monotonic()
    server = _start(root)
    try:
        assert time.monotonic() - started < 10
        data = server.log.read_bytes()
        at = data.rindex(f"Started server process [{server.proc.pid}]".encode())
        ready = data.rindex(b"The server is fired up and ready to roll!")
        assert len(data) - at > 256 * 1024 and len(data) - ready > 256 * 1024
        assert data.count(b"] Decode batch, #running-req: 16, ") >= 1000
    finally:
        server.stop()


def test_decode_log_interval_is_honoured(tmp_path):
    root = _host(tmp_path, load={"concurrency": 2, "max_tokens": 200})
    server = _start(root, "--decode-log-interval", "1")
    try:
        time.sleep(2)
        assert server.text().count("] Decode batch, ") > 50
    finally:
        server.stop()


def _text(path: Path) -> str:
    """The log, or "" until the detached shell has created it."""
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""


def test_restarts_append_lifetimes_to_one_log(tmp_path):
    root = _host(tmp_path)
    log = root / "logs" / "sglang.log"
    port = free_port()
    argv = [
        str(root / "env" / "bin" / "python3"),
        "-m",
        "sglang.launch_server",
        "--model-path",
        str(root / "models" / MODEL),
        "--port",
        str(port),
    ]
    env = {"PATH": path_env(root), "HOME": str(root), "CUDA_VISIBLE_DEVICES": "0"}
    pids = []
    for _ in range(3):
        start_detached(argv, env=env, cwd=str(root), log=str(log))
        _wait_for(lambda: _text(log).count("ready to roll") == len(pids) + 1, 20, "ready")
        pids.append(int(re.findall(r"Started server process \[(\d+)\]", log.read_text())[-1]))
        os.kill(pids[-1], signal.SIGTERM)
        _wait_for(lambda: not pid_alive(pids[-1]), 10, "exit")
    text = log.read_text()
    assert re.findall(r"Started server process \[(\d+)\]", text) == [str(pid) for pid in pids]
    assert len(set(pids)) == 3
    assert text.count("Load weight begin.") == 3 and text.count("ready to roll") == 3
