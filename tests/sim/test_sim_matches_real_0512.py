"""The simulator as SGLang 0.5.12 against a real 0.5.12 server captured on an H200.

Shape by shape, not value by value: the same JSON keys and value types per
endpoint, the same fields per log line kind, the startup milestones in the
real wording and order, the same process tree. The fixture is what the real
server wrote (tests/fixtures/real-sglang-0.5.12-h200, copied unchanged).
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from sglconsole.core.sglang_log import parse_line
from sglconsole.sim import versiontable
from sglconsole.sim.host.root import create_host
from tests.sim.test_sim_server import Server

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real-sglang-0.5.12-h200"
VERSION = "0.5.12"
MODEL = "Qwen3-8B"
# the real launch (launches.txt), on the simulated host's model
ARGS = [
    "--load-format",
    "dummy",
    "--host",
    "127.0.0.1",
    "--attention-backend",
    "triton",
    "--sampling-backend",
    "pytorch",
    "--grammar-backend",
    "none",
    "--enable-metrics",
    "--speculative-algorithm",
    "NGRAM",
    "--speculative-num-draft-tokens",
    "8",
    "--max-running-requests",
    "32",
    "--cuda-graph-max-bs",
    "32",
    "--mem-fraction-static",
    "0.5",
]
ENDPOINTS = ["model_info", "get_model_info", "get_load", "v1_models"]


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    root = create_host(
        tmp_path_factory.mktemp("h200") / "h",
        gpu_model="H200",
        gpu_count=1,
        sglang_version=VERSION,
        models=(MODEL,),
        sglang={"startup_s": 0.3},
    )
    server = Server(
        root, ["--model-path", str(root / "models" / MODEL), *ARGS], {"CUDA_VISIBLE_DEVICES": "0"}
    )
    try:
        _wait_healthy(server)
        answers = {
            name: httpx.get(f"{server.url}/{name.replace('v1_', 'v1/')}", timeout=10)
            for name in [
                *ENDPOINTS,
                "server_info",
                "get_server_info",
                "version",
                "ready",
                "metrics",
            ]
        }
        httpx.post(
            f"{server.url}/generate",
            timeout=30,
            json={"text": "hello", "sampling_params": {"max_new_tokens": 400}},
        )
        children = subprocess.run(
            ["ps", "-ww", "-o", "args=", "--ppid", str(server.proc.pid)],
            capture_output=True,
            text=True,
        ).stdout.splitlines()
        time.sleep(0.3)  # the last access lines
        yield server, answers, children
    finally:
        server.stop()


def _wait_healthy(server: Server, timeout: float = 30) -> None:
    """0.5.12 has no /ready: /health answers 503 until the server is up (as the real log shows)."""
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


def _shape(value):
    """Key sets and value types, recursively (lists by their first item)."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return (
        "number"
        if isinstance(value, int | float) and not isinstance(value, bool)
        else type(value).__name__
    )


def _real_json(name: str, state: str = "idle"):
    return json.loads((REAL / state / f"{name}.txt").read_text())


@pytest.mark.parametrize("name", ENDPOINTS)
def test_endpoint_has_the_real_keys_and_types(sim, name):
    _, answers, _ = sim
    assert answers[name].status_code == 200
    assert _shape(answers[name].json()) == _shape(_real_json(name))


def _server_arg_names() -> set[str]:
    """The ServerArgs fields, as the real log's `server_args=ServerArgs(...)` line lists them."""
    line = next(
        t
        for t in (REAL / "sglang-30000.log").read_text().splitlines()
        if "server_args=ServerArgs(" in t
    )
    return set(re.findall(r"[(,] (\w+)=|\((\w+)=", line)[0]) | set(re.findall(r", (\w+)=", line))


@pytest.mark.parametrize("name", ["server_info", "get_server_info"])
def test_server_info_adds_what_real_adds_to_the_server_args(sim, name):
    _, answers, _ = sim
    real, mine = _real_json(name), answers[name].json()
    args = _server_arg_names()
    assert (
        set(mine) - args == set(real) - args
    )  # status, max_total_num_tokens, ..., no startup_time
    for key in set(real) - args - {"internal_states"}:
        assert _shape(mine[key]) == _shape(real[key]), key
    assert isinstance(mine["internal_states"], list) and isinstance(
        mine["internal_states"][0], dict
    )


def test_what_0_5_12_does_not_serve_is_404(sim):
    _, answers, _ = sim
    assert answers["version"].status_code == 404 and answers["version"].json() == _real_json(
        "version"
    )
    assert answers["ready"].status_code == 404


def _metric_shapes(text: str) -> dict[str, frozenset]:
    shapes = {}
    for line in text.splitlines():
        match = re.match(r"(sglang:\w+)\{([^}]*)\} ", line)
        if match:
            shapes[match.group(1)] = frozenset(re.findall(r'(\w+)="', match.group(2)))
    return shapes


def test_metrics_are_real_metric_names_with_real_labels(sim):
    _, answers, _ = sim
    real = _metric_shapes((REAL / "idle" / "metrics.txt").read_text())
    mine = _metric_shapes(answers["metrics"].text)
    assert mine and {name: real.get(name) for name in mine} == mine


def _kinds(lines: list[str]) -> dict[tuple, frozenset]:
    """Each parsed line kind (milestones by name) -> the fields it parses into."""
    out = {}
    for text in lines:
        record = parse_line(text)
        if record is None:
            continue
        fields = frozenset(
            k for k in record.__slots__ if getattr(record, k, None) not in (None, {})
        )
        fields |= frozenset(f"extra.{k}" for k in record.extra or {})
        out.setdefault((record.kind, record.milestone), fields)
    return out


def test_every_sim_line_kind_parses_like_the_real_one(sim):
    server, _, _ = sim
    real = _kinds((REAL / "sglang-30000.log").read_text().splitlines())
    mine = _kinds(server.text().splitlines())
    assert ("decode", None) in mine and ("prefill", None) in mine
    for kind, fields in mine.items():
        assert real.get(kind) == fields, kind


def _milestones(lines: list[str]) -> list[str]:
    """The startup milestones of the version's table, in the order the first lifetime logs them."""
    patterns = []
    for key, template in versiontable.load(VERSION)["startup"].items():
        if template:
            literal = re.split(r"\{[^{}]*\}", template)
            patterns.append((key, re.compile(r"\] " + ".+?".join(map(re.escape, literal)) + "$")))
    seen = []
    for text in lines:
        key = next((key for key, pattern in patterns if pattern.search(text)), None)
        if key:
            seen.append(key)
        if key == "ready":
            break
    return seen


def test_startup_milestones_have_the_real_wording_and_order(sim):
    server, _, _ = sim
    real = _milestones((REAL / "sglang-30000.log").read_text().splitlines())
    assert "kv_cache_allocated" in real and "piecewise_graph_end" in real
    assert _milestones(server.text().splitlines()) == real


def test_access_and_health_lines_like_real(sim):
    server, _, _ = sim
    text = server.text()
    for request in ("GET /model_info", "GET /health", "POST /generate", "GET /get_load"):
        assert re.search(
            rf'^\[[-\d :]+\] INFO:     127\.0\.0\.1:\d+ - "{request} HTTP/1\.1" 200 OK$', text, re.M
        )
    assert re.search(r'"GET /version HTTP/1\.1" 404 Not Found$', text, re.M)
    warning = (
        "Endpoint '/get_load' is deprecated and will be removed in a future version. "
        "Please use '/v1/loads' instead."
    )
    assert re.search(rf"^\[[-\d :]+\] {re.escape(warning)}$", text, re.M)
    # the health check's one-token generation shows as a prefill of one token, cuda graph on
    assert (
        "Prefill batch, #new-seq: 1, #new-token: 1, " in text
        and "cuda graph: True, input throughput" in text
    )


def _real_children() -> list[str]:
    text = (REAL / "idle" / "procs.txt").read_text()
    return [
        line.split("cmdline: ", 1)[1].rstrip("|").split("|")[0:4]
        for line in text.splitlines()
        if line.startswith("cmdline: ")
    ][1:]


def test_process_tree_has_the_real_children(sim):
    _, _, children = sim
    real = _real_children()
    tracker = [c for c in real if "resource_tracker" in " ".join(c)][0]
    # -B only when the environment says PYTHONDONTWRITEBYTECODE (the real host's did)
    shape = r" (-B )?-c from multiprocessing\.resource_tracker import main;main\(\d+\)$"
    assert re.search(shape, " " + " ".join(tracker[1:])), tracker
    assert any(re.search(shape, c) for c in children), children
    titles = sorted(c[0] for c in real if c[0].startswith("sglang::"))
    assert sorted(c.strip() for c in children if c.startswith("sglang::")) == titles
