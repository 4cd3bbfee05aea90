"""The simulator as SGLang 0.5.17 against a real 0.5.17 server captured on an H200.

Shape by shape, not value by value (like test_sim_matches_real_0512): the same JSON keys and
value types per endpoint, the metric names and labels, the log line kinds, the startup milestones
in the real wording and order, the health-check failure line, the deprecation lines. The fixture
is what the real server wrote (real-sglang-0.5.17-h200, read where it lies, never edited).
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import httpx
import pytest

from sglconsole.core.sglang_log import parse_line
from sglconsole.sim import versiontable
from tests.sim.test_sim_matches_real_0512 import _kinds, _metric_shapes, _shape
from tests.sim.test_sim_server import Server
from tests.sim.test_sim_stall import FAILED, _host, _wait_healthy

HERE = Path(__file__).resolve()
CANDIDATES = [
    HERE.parents[1] / "fixtures" / "real-sglang-0.5.17-h200",
    HERE.parents[3] / "shared" / "fixtures" / "real-sglang-0.5.17-h200",
]
REAL = next((path for path in CANDIDATES if path.is_dir()), None)
pytestmark = pytest.mark.skipif(REAL is None, reason="no real-sglang-0.5.17-h200 fixture here")
VERSION = "0.5.17"
MODEL = "Qwen3-8B"
# the real launch (launches.txt), on the simulated host's model
ARGS = [
    "--load-format",
    "dummy",
    "--host",
    "127.0.0.1",
    "--attention-backend",
    "triton",
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
    import json

    # long enough that /health is asked before ready even on a loaded machine (its 503 is a check)
    root = _host(tmp_path_factory.mktemp("h200"), startup_s=3)
    server = Server(
        root, ["--model-path", str(root / "models" / MODEL), *ARGS], {"CUDA_VISIBLE_DEVICES": "0"}
    )
    try:
        _wait_healthy(server)
        answers = {}
        for name in [*ENDPOINTS, "server_info", "get_server_info", "version", "ready"]:
            answers[name] = httpx.get(f"{server.url}/{name.replace('v1_', 'v1/')}", timeout=10)
        httpx.post(
            f"{server.url}/generate",
            timeout=30,
            json={"text": "hello " * 10, "sampling_params": {"max_new_tokens": 400}},
        )
        answers["metrics"] = httpx.get(f"{server.url}/metrics", timeout=10)
        answers["v1_loads"] = httpx.get(f"{server.url}/v1/loads", timeout=10)
        answers["get_load_idle"] = httpx.get(f"{server.url}/get_load", timeout=10)
        path = root / "sim" / "host.json"
        data = json.loads(path.read_text())
        data["sglang"].update(scheduler_stall=True, health_timeout_s=2)
        path.write_text(json.dumps(data))
        time.sleep(1)
        answers["health_stalled"] = httpx.get(f"{server.url}/health", timeout=10)
        time.sleep(0.3)  # the last access lines
        yield server, answers
    finally:
        server.stop()


def _real(name: str, state: str = "idle") -> str:
    return (REAL / state / f"{name}.txt").read_text()


@pytest.mark.parametrize("name", ENDPOINTS)
def test_endpoint_has_the_real_keys_and_types(sim, name):
    import json

    _, answers = sim
    assert answers[name].status_code == 200
    assert _shape(answers[name].json()) == _shape(json.loads(_real(name)))


@pytest.mark.parametrize("name", ["server_info", "get_server_info"])
def test_server_info_has_the_real_keys(sim, name):
    import json

    _, answers = sim
    real = json.loads(_real(name))
    mine = answers[name].json()
    assert set(mine) == set(real)
    assert _shape(mine["startup_time"]) == _shape(real["startup_time"])
    assert mine["version"] == VERSION and mine["status"] == "ready"


# what the launch, the host and the run decide rather than SGLang's flag resolution
RUN_SPECIFIC = {
    "model_path",
    "tokenizer_path",
    "served_model_name",
    "port",
    "random_seed",
    "max_total_num_tokens",
    "max_req_input_len",
    "startup_time",
    "internal_states",
}


def test_server_info_resolves_every_flag_like_real(sim):
    """The same argv resolves to the same values (0.5.17's own flag table, its defaults, and
    what ServerArgs.__post_init__ fills in: cuda_graph_config, sampling_backend, ...)."""
    import json

    _, answers = sim
    real = json.loads(_real("server_info"))
    mine = answers["server_info"].json()
    differ = {
        key: (mine.get(key), real[key])
        for key in real
        if key not in RUN_SPECIFIC and mine.get(key) != real[key]
    }
    assert not differ, differ
    assert isinstance(mine["random_seed"], int) and mine["cuda_graph_max_bs_decode"] == 32


def test_get_load_at_idle_is_dp_rank_0_and_back_to_0(sim):
    import json

    _, answers = sim
    real = json.loads(_real("get_load"))
    mine = answers["get_load_idle"].json()
    assert [{k: v for k, v in row.items() if k != "ts_tic"} for row in mine] == [
        {k: v for k, v in row.items() if k != "ts_tic"} for row in real
    ]


def test_v1_loads_has_the_shape_of_its_source(sim):
    _, answers = sim
    shape = versiontable.load(VERSION)["v1_loads"]
    body = answers["v1_loads"].json()
    assert list(body) == shape["keys"] and body["version"] == VERSION
    (load,) = body["loads"]
    assert set(shape["core_keys"]) <= set(load)
    assert set(load) - set(shape["core_keys"]) <= set(shape["sections"])
    assert load["dp_rank"] == 0 and load["num_running_reqs"] == 0


def test_what_0_5_17_does_not_serve_is_404(sim):
    _, answers = sim
    assert answers["version"].status_code == 404 and answers["ready"].status_code == 404


def test_metrics_are_real_metric_names_with_real_labels(sim):
    _, answers = sim
    real = _metric_shapes(_real("metrics"))
    mine = _metric_shapes(answers["metrics"].text)
    assert mine and {name: real.get(name) for name in mine} == mine
    assert "is_streaming" in mine["sglang:prompt_tokens_total"]


def _families(text: str) -> dict[str, tuple[str, str]]:
    """family -> (type, help), from the # TYPE / # HELP lines."""
    kinds = dict(re.findall(r"^# TYPE (sglang:\S+) (\S+)$", text, re.M))
    helps = dict(re.findall(r"^# HELP (sglang:\S+) (.*)$", text, re.M))
    return {name: (kind, helps.get(name, "")) for name, kind in kinds.items()}


# written only once a request hit the prefix cache / was aborted (the real idle capture
# followed 7 failed health checks); the simulated run has neither
EVENT_ONLY = {"sglang:cached_tokens_total", "sglang:num_aborted_requests_total"}


def test_metrics_serve_every_real_family_with_its_type_and_help(sim):
    _, answers = sim
    real = _families(_real("metrics"))
    assert len(real) == 71 and _families(_real("metrics", "under-load")).keys() == real.keys()
    mine = _families(answers["metrics"].text)
    assert {name: mine.get(name) for name in real if name not in EVENT_ONLY} == {
        name: kind for name, kind in real.items() if name not in EVENT_ONLY
    }
    assert set(mine) == set(real) - EVENT_ONLY


def test_metrics_series_have_the_real_shape(sim):
    _, answers = sim
    text = answers["metrics"].text
    real = _real("metrics")
    for name, (kind, _) in _families(real).items():
        if kind == "histogram" and name not in EVENT_ONLY:
            for part in ("_sum", "_count"):
                assert re.search(rf"^{name}{part}\{{", text, re.M), name + part
            assert re.search(rf'^{name}_bucket\{{[^}}]*le="\+Inf"', text, re.M), name

    def series(page: str, family: str) -> int:
        return len(re.findall(rf"^{family}\{{", page, re.M))

    for counter in ("prompt_tokens", "generation_tokens", "num_requests"):
        name = f"sglang:{counter}_total"
        assert series(real, name) == series(text, name) == 2, name  # is_streaming false/true


def test_at_idle_throughput_and_running_go_to_0_and_accept_length_stays(sim):
    _, answers = sim
    values = {
        match.group(1): float(match.group(2))
        for match in re.finditer(r"^(sglang:\w+)\{[^}]*\} (\S+)$", answers["metrics"].text, re.M)
    }
    assert values["sglang:gen_throughput"] == 0.0
    assert values["sglang:num_running_reqs"] == 0.0
    assert values["sglang:spec_accept_length"] > 1.0


def test_every_sim_line_kind_parses_like_the_real_one(sim):
    server, _ = sim
    real = _kinds((REAL / "sglang-30000.log").read_text().splitlines())
    mine = _kinds(server.text().splitlines())
    assert ("decode", None) in mine and ("prefill", None) in mine
    for kind, fields in mine.items():
        assert real.get(kind) == fields, kind


def _milestones(lines: list[str]) -> list[str]:
    patterns = []
    for key, template in versiontable.load(VERSION)["startup"].items():
        if template:
            literal = re.split(r"\{[^{}]*\}", template.replace("{{", "\0").replace("}}", "\1"))
            literal = [part.replace("\0", "{").replace("\1", "}") for part in literal]
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
    server, _ = sim
    real = _milestones((REAL / "sglang-30000.log").read_text().splitlines())
    assert {"kv_cache_allocated", "tree_cache_initialized", "engine_startup_timings"} <= set(real)
    assert "decode_graph_begin" in real
    assert _milestones(server.text().splitlines()) == real


def test_warning_lines_like_real(sim):
    server, _ = sim
    real = (REAL / "sglang-30000.log").read_text().splitlines()
    mine = server.text().splitlines()
    # the 3-line UserWarning, without timestamp, before anything else
    assert [re.sub(r"^\S+launch_server\.py", "X", line) for line in mine[:3]] == [
        re.sub(r"^\S+launch_server\.py", "X", line) for line in real[:3]
    ]
    for endpoint, new in (
        ("get_load", "v1/loads"),
        ("get_server_info", "server_info"),
        ("get_model_info", "model_info"),
    ):
        warning = (
            f"Endpoint '/{endpoint}' is deprecated and will be removed in a future version. "
            f"Please use '/{new}' instead."
        )
        pattern = re.compile(rf"^\[[-\d :]+\] {re.escape(warning)}$", re.M)
        assert pattern.search("\n".join(real)) and pattern.search(server.text()), endpoint


def test_cuda_graph_max_bs_deprecation_line_like_real(sim):
    """0.5.17's DeprecatedAliasStoreAction: one bold-yellow line, right after the UserWarning,
    byte for byte (print_deprecated_warning before logging is set up), and the value kept."""
    server, answers = sim
    real = (REAL / "sglang-30000.log").read_text().splitlines()
    mine = server.text().splitlines()
    line = (
        "\x1b[1;33m'--cuda-graph-max-bs' is deprecated and will be removed in a future release. "
        "Use '--cuda-graph-max-bs-decode' instead.\x1b[0m"
    )
    assert real[3] == line and mine[3] == line
    assert sum("--cuda-graph-max-bs'" in text for text in mine) == 1
    assert answers["server_info"].json()["cuda_graph_max_bs_decode"] == 32


def test_prefill_cuda_graph_by_batch_like_real(sim):
    server, _ = sim

    def graph_by_size(lines):
        out = set()
        for text in lines:
            record = parse_line(text)
            if record is not None and record.kind == "prefill":
                size = int(re.search(r"#new-token: (\d+)", text).group(1))
                out.add((size >= 2, "cuda graph: True" in text))
        return out

    real = graph_by_size((REAL / "sglang-30000.log").read_text().splitlines())
    mine = graph_by_size(server.text().splitlines())
    assert real == {(False, False), (True, True)} and mine == real


def test_health_fails_with_the_real_line_while_wedged(sim):
    server, answers = sim
    real = FAILED.findall((REAL / "sglang-30000.log").read_text())
    assert len(real) == 7 and set(real) == {"20"}
    assert answers["health_stalled"].status_code == 503
    assert FAILED.findall(server.text()) == ["2"]
    assert re.search(r'"GET /health HTTP/1\.1" 503 Service Unavailable$', server.text(), re.M)


def test_health_answers_503_before_ready_like_real(sim):
    server, _ = sim
    real = (REAL / "sglang-30000.log").read_text()
    line = r'^\[[-\d :]+\] INFO:     127\.0\.0\.1:\d+ - "GET /health HTTP/1\.1" 503 '
    assert re.search(line, real, re.M)
    head = server.text().split("The server is fired up and ready to roll!")[0]
    assert re.search(line, head, re.M)
