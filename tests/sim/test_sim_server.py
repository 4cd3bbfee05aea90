"""The simulated SGLang server as a real local process (no SSH): flags, startup, API, failure
modes."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from sglconsole.core.sglang_log import parse_line
from sglconsole.sim import gpustate
from sglconsole.sim.host.root import create_host

MODEL = "Qwen3.6-27B"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def host(tmp_path) -> Path:
    return create_host(
        tmp_path / "h",
        gpu_model="A6000",
        gpu_count=4,
        models=(MODEL, "Qwen3-8B"),
        sglang={"startup_s": 0.3},
    )


class Server:
    def __init__(self, root: Path, args: list[str], env: dict | None = None):
        self.root = root
        self.port = free_port()
        self.log = root / "logs" / f"{self.port}.log"
        self.argv = [
            str(root / "env" / "bin" / "python3"),
            "-m",
            "sglang.launch_server",
            *args,
            "--port",
            str(self.port),
        ]
        full_env = {"PATH": os.environ["PATH"], "CUDA_VISIBLE_DEVICES": "0,1", **(env or {})}
        with open(self.log, "wb") as fh:
            self.proc = subprocess.Popen(
                self.argv, stdout=fh, stderr=subprocess.STDOUT, env=full_env, start_new_session=True
            )
        self.url = f"http://127.0.0.1:{self.port}"

    def wait_ready(self, timeout: float = 15) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.text()[-3000:]
            try:
                if httpx.get(self.url + "/ready", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.05)
        raise AssertionError("not ready:\n" + self.text()[-3000:])

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def records(self, kind: str):
        return [
            r for r in map(parse_line, self.text().splitlines()) if r is not None and r.kind == kind
        ]

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()


@pytest.fixture
def servers():
    started: list[Server] = []
    yield started
    for server in started:
        server.stop()


def start(servers, root, args, env=None) -> Server:
    server = Server(root, args, env)
    servers.append(server)
    return server


def model_args(root: Path, *extra: str) -> list[str]:
    return ["--model-path", str(root / "models" / MODEL), "--tp-size", "2", *extra]


def test_unknown_flag_fails_like_argparse(host, servers):
    server = start(servers, host, model_args(host, "--mamba-scheduler-strategy", "extra_buffer"))
    assert server.proc.wait(10) == 2
    text = server.text()
    assert (
        "\nusage: sglang serve [-h] --model-path MODEL_PATH" in text
    )  # 0.5.10+ names its parser "sglang serve"
    assert text.rstrip().endswith(
        "sglang serve: error: unrecognized arguments: --mamba-scheduler-strategy extra_buffer"
    )


def test_prefixes_are_accepted_like_argparse(host, servers):
    server = start(
        servers,
        host,
        model_args(host, "--speculative-algo", "NEXTN", "--speculative-num-steps", "3"),
    )
    server.wait_ready()
    info = httpx.get(server.url + "/server_info").json()
    assert info["speculative_algorithm"] == "NEXTN" and info["tp_size"] == 2


def test_startup_lines_process_tree_and_health(host, servers):
    server = start(servers, host, model_args(host))
    server.wait_ready()
    text = server.text()
    # 0.5.23 logs no "KV Cache is allocated" line (its kv_cache_configurator says only
    # "Memory pool end")
    for needle in (
        "Load weight begin",
        "Memory pool end",
        "CUDA graph end",
        "max_total_num_tokens=",
        "The server is fired up and ready to roll!",
    ):
        assert needle in text
    children = subprocess.run(
        ["ps", "-o", "args=", "--ppid", str(server.proc.pid)], capture_output=True, text=True
    ).stdout
    assert (
        "sglang::scheduler_TP0" in children
        and "sglang::scheduler_TP1" in children
        and "sglang::detokenizer" in children
    )
    cmdline = Path(f"/proc/{server.proc.pid}/cmdline").read_bytes().split(b"\0")[:-1]
    assert [a.decode() for a in cmdline] == server.argv


def test_health_is_503_while_starting(tmp_path, servers):
    root = create_host(tmp_path / "slow", models=("Qwen3-8B",), sglang={"startup_s": 3})
    server = start(
        servers,
        root,
        ["--model-path", str(root / "models" / "Qwen3-8B")],
        env={"CUDA_VISIBLE_DEVICES": "0"},
    )
    deadline = time.monotonic() + 5
    status = None
    while time.monotonic() < deadline and status != 503:
        try:
            status = httpx.get(server.url + "/health", timeout=1).status_code
        except httpx.HTTPError:
            time.sleep(0.05)
    assert status == 503
    server.wait_ready()


def test_endpoints_use_sglang_field_names(host, servers):
    server = start(
        servers,
        host,
        model_args(
            host,
            "--speculative-algorithm",
            "NEXTN",
            "--speculative-num-steps",
            "3",
            "--speculative-num-draft-tokens",
            "4",
            "--enable-metrics",
        ),
    )
    server.wait_ready()
    get = lambda path: httpx.get(server.url + path, timeout=10)  # noqa: E731
    assert get("/health_generate").status_code == 200
    assert get("/model_info").json()["model_path"].endswith(MODEL)
    info = get("/get_server_info").json()
    assert (
        info["version"] == "0.5.23"
        and "launch_command" in info
        and info["max_running_requests"] > 0
    )
    assert get("/v1/models").json()["data"][0]["id"].endswith(MODEL)
    out = httpx.post(
        server.url + "/generate",
        json={
            "text": "What is 2+2? Answer with one number.",
            "sampling_params": {"max_new_tokens": 16},
        },
        timeout=10,
    ).json()
    assert out["text"].strip() == "4"
    meta = out["meta_info"]
    for key in (
        "prompt_tokens",
        "completion_tokens",
        "e2e_latency",
        "spec_accept_length",
        "spec_verify_ct",
        "finish_reason",
    ):
        assert key in meta
    chat = httpx.post(
        server.url + "/v1/chat/completions",
        json={"messages": [{"role": "user", "content": "hello"}], "max_tokens": 20},
        timeout=10,
    ).json()
    assert chat["choices"][0]["message"]["content"] and chat["usage"]["completion_tokens"] == 20
    with httpx.stream(
        "POST",
        server.url + "/v1/chat/completions",
        json={"messages": [{"role": "user", "content": "hi"}], "max_tokens": 30, "stream": True},
        timeout=10,
    ) as response:
        events = [line for line in response.iter_lines() if line.startswith("data: ")]
    assert events[-1] == "data: [DONE]" and len(events) >= 3
    chunk = json.loads(events[0][6:])
    assert chunk["object"] == "chat.completion.chunk" and "delta" in chunk["choices"][0]
    metrics = get("/metrics").text
    assert "sglang:gen_throughput" in metrics and "sglang:num_running_reqs" in metrics


def test_a_stream_closed_by_its_client_ends_its_request(host, servers):
    """SGLang aborts a request whose client went away; the sim did not, so a probe that closed its
    stream once steady left a 512-token request decoding, and the next reader of that server saw
    its tok/s summed with the orphan's."""
    server = start(servers, host, model_args(host, "--enable-metrics"))
    server.wait_ready()

    def running() -> float:
        page = httpx.get(server.url + "/metrics", timeout=10).text
        return sum(
            float(line.rsplit(" ", 1)[1])
            for line in page.splitlines()
            if line.startswith("sglang:num_running_reqs")
        )

    body = {"text": "Tell me about GPUs", "sampling_params": {"max_new_tokens": 10_000}}
    with httpx.stream(
        "POST", server.url + "/generate", json={**body, "stream": True}, timeout=10
    ) as response:
        events = response.iter_lines()
        assert next(line for line in events if line.startswith("data: "))
        assert running() == 1
    deadline = time.monotonic() + 10
    while running() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert running() == 0  # 10,000 tokens would have taken minutes


def test_metrics_only_with_enable_metrics(host, servers):
    server = start(servers, host, model_args(host))
    server.wait_ready()
    assert httpx.get(server.url + "/metrics").status_code == 404


def run_load(server: Server, seconds: float, concurrency: int = 1) -> list:
    import concurrent.futures

    def one(_):
        httpx.post(
            server.url + "/generate",
            json={"text": "Tell me about GPUs", "sampling_params": {"max_new_tokens": 10_000}},
            timeout=seconds + 30,
        )

    deadline = time.monotonic() + seconds
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        futures = [pool.submit(one, i) for i in range(concurrency)]
        time.sleep(max(0, deadline - time.monotonic()))
        server.stop()
        for f in futures:
            f.cancel()
    return [r for r in server.records("decode") if (r.running_req or 0) > 0]


def test_more_speculative_steps_run_faster(host, servers):
    def spec(steps, draft):
        speculative = ["--speculative-algorithm", "NEXTN", "--speculative-num-steps", str(steps)]
        rest = ["--speculative-num-draft-tokens", str(draft), "--decode-log-interval", "10"]
        return model_args(host, *speculative, *rest)

    proven = start(servers, host, spec(3, 4), {"SGLANG_ENABLE_SPEC_V2": "1"})
    drifted = start(servers, host, spec(1, 2), {"CUDA_VISIBLE_DEVICES": "2,3"})
    proven.wait_ready()
    drifted.wait_ready()
    fast = run_load(proven, 4)[1:]
    slow = run_load(drifted, 4)[1:]
    median = lambda rs: sorted(r.gen_throughput for r in rs)[len(rs) // 2]  # noqa: E731
    assert median(fast) >= 1.7 * median(slow), (median(fast), median(slow))
    assert 3.0 <= sorted(r.accept_len for r in fast)[len(fast) // 2] <= 3.4
    assert 1.6 <= sorted(r.accept_len for r in slow)[len(slow) // 2] <= 1.9


def test_max_running_requests_caps_the_batch(host, servers):
    server = start(
        servers, host, model_args(host, "--max-running-requests", "2", "--decode-log-interval", "5")
    )
    server.wait_ready()
    records = run_load(server, 3, concurrency=5)
    assert max(r.running_req for r in records) == 2
    assert max(r.queue_req for r in records) >= 1


def test_oom_at_start(tmp_path, servers):
    root = create_host(
        tmp_path / "oom",
        gpu_model="A6000",
        gpu_count=2,
        models=(MODEL,),
        sglang={"startup_s": 0.2, "oom_at_start": True},
    )
    server = start(servers, root, model_args(root))
    assert server.proc.wait(10) == 1
    assert "torch.OutOfMemoryError: CUDA out of memory." in server.text()
    assert any(r.error == "cuda_oom" for r in server.records("error"))


def test_oom_when_the_gpu_is_already_taken(host, servers):
    gpustate.register_gpu_use(
        host, os.getpid(), [0], 40000, 0, "python3"
    )  # something else holds GPU 0
    server = start(servers, host, model_args(host, "--mem-fraction-static", "0.9"))
    assert server.proc.wait(10) == 1
    assert "CUDA out of memory" in server.text()


def test_dies_after_n_seconds(tmp_path, servers):
    root = create_host(
        tmp_path / "die", models=("Qwen3-8B",), sglang={"startup_s": 0.2, "die_after_s": 1}
    )
    server = start(
        servers,
        root,
        ["--model-path", str(root / "models" / "Qwen3-8B")],
        env={"CUDA_VISIBLE_DEVICES": "0"},
    )
    server.wait_ready()
    assert server.proc.wait(10) == 1
    assert "NCCL error" in server.text()


def test_degenerate_output_loops(tmp_path, servers):
    root = create_host(
        tmp_path / "deg", models=("Qwen3-8B",), sglang={"startup_s": 0.2, "degenerate": True}
    )
    server = start(
        servers,
        root,
        ["--model-path", str(root / "models" / "Qwen3-8B")],
        env={"CUDA_VISIBLE_DEVICES": "0"},
    )
    server.wait_ready()
    text = httpx.post(
        server.url + "/generate",
        json={"text": "What is 2+2?", "sampling_params": {"max_new_tokens": 12}},
    ).json()["text"]
    assert text.count("2 + 2 =") >= 2


def test_children_linger_after_a_kill(tmp_path, servers):
    root = create_host(
        tmp_path / "linger",
        models=("Qwen3-8B",),
        sglang={"startup_s": 0.2, "linger_children": True},
    )
    server = start(
        servers,
        root,
        ["--model-path", str(root / "models" / "Qwen3-8B")],
        env={"CUDA_VISIBLE_DEVICES": "0"},
    )
    server.wait_ready()
    # SGLang's own children (its scheduler, its detokenizer), by title: the multiprocessing
    # resource tracker is a child too, and it ends by itself once the server is gone
    children = [
        int(p)
        for p in subprocess.run(
            ["pgrep", "-P", str(server.proc.pid), "-f", "^sglang::"],
            capture_output=True,
            text=True,
        ).stdout.split()
    ]
    assert children, "the server started no sglang:: children"
    os.kill(server.proc.pid, signal.SIGKILL)
    server.proc.wait()
    time.sleep(1.5)
    alive = [pid for pid in children if Path(f"/proc/{pid}").exists()]
    assert alive == children, "its children should outlive the killed server"
    holders = {u["pid"] for u in gpustate.read_gpu_uses(root)}
    assert holders & set(alive), "the orphaned scheduler still holds GPU memory"
    for pid in alive:
        os.kill(pid, signal.SIGKILL)


def test_zombie_child_is_held_by_the_server(tmp_path, servers):
    root = create_host(
        tmp_path / "zombie", models=("Qwen3-8B",), sglang={"startup_s": 0.2, "zombie_child": True}
    )
    server = start(
        servers,
        root,
        ["--model-path", str(root / "models" / "Qwen3-8B")],
        env={"CUDA_VISIBLE_DEVICES": "0"},
    )
    server.wait_ready()
    time.sleep(0.5)
    states = subprocess.run(
        ["ps", "-o", "stat=,args=", "--ppid", str(server.proc.pid)], capture_output=True, text=True
    ).stdout
    assert any(line.strip().startswith("Z") for line in states.splitlines()), states
