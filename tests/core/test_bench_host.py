"""The host's bench_serving: the command the console builds and the result line it reads back."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from sglconsole.bench import host_bench
from sglconsole.bench.model import SweepSettings
from sglconsole.sim.bench import serving as sim_bench

REAL = (
    Path(__file__).resolve().parents[2]
    / ".cache"
    / "real-sglang-0.5.23"
    / "lib"
    / "python3.11"
    / "site-packages"
    / "sglang"
)

RESULT = {
    "backend": "sglang",
    "dataset_name": "random-ids",
    "max_concurrency": 8,
    "duration": 12.5,
    "completed": 31,
    "total_input_tokens": 31 * 256,
    "total_output_tokens": 31 * 256,
    "output_throughput": 634.9,
    "median_ttft_ms": 81.0,
    "p99_ttft_ms": 240.0,
    "median_tpot_ms": 12.5,
    "median_itl_ms": 11.0,
    "p99_itl_ms": 33.0,
    "accept_length": 3.1,
}


def command(module: str = "sglang.benchmark.serving") -> list[str]:
    settings = SweepSettings(input_len=256, output_len=128, seed=3)
    return host_bench.argv(
        "/opt/venv/bin/python",
        module,
        "10.0.0.5",
        30001,
        8,
        32,
        settings,
        "/tmp/out.jsonl",
        "/models/Qwen3-8B",
    )


def options(argv: list[str]) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for index, word in enumerate(argv):
        if word.startswith("--"):
            following = argv[index + 1] if index + 1 < len(argv) else "--"
            out[word] = None if following.startswith("--") else following
    return out


def test_the_command_fixes_lengths_concurrency_and_seed():
    argv = command()
    assert argv[:3] == ["/opt/venv/bin/python", "-m", "sglang.benchmark.serving"]
    pairs = options(argv[3:])
    assert pairs["--dataset-name"] == "random-ids" and pairs["--random-range-ratio"] == "1.0"
    assert (
        pairs["--max-concurrency"] == "8"
        and pairs["--num-prompts"] == "32"
        and pairs["--seed"] == "3"
    )
    assert pairs["--random-input-len"] == "256" and pairs["--random-output-len"] == "128"
    assert (
        pairs["--host"] == "10.0.0.5"
        and pairs["--port"] == "30001"
        and pairs["--tokenizer"] == "/models/Qwen3-8B"
    )
    assert "--disable-tqdm" in pairs and pairs["--output-file"] == "/tmp/out.jsonl"


def test_the_simulated_bench_serving_accepts_the_command():
    args = sim_bench.parser().parse_args(command("sglang.bench_serving")[3:])
    assert (
        args.max_concurrency == 8
        and args.dataset_name == "random-ids"
        and args.output_file == "/tmp/out.jsonl"
    )


def _real_flags() -> set[str]:
    source = next(
        (p for p in (REAL / "benchmark" / "serving.py", REAL / "bench_serving.py") if p.exists()),
        None,
    )
    if source is None:
        pytest.skip("the real-SGLang venv is not built (tools/real_sglang_venv.sh)")
    flags = set()
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "add_argument":
            flags |= {
                a.value
                for a in node.args
                if isinstance(a, ast.Constant) and str(a.value).startswith("--")
            }
    return flags


def test_every_flag_exists_in_sglangs_own_bench_serving():
    used = {a for a in command()[3:] if a.startswith("--")}
    assert used <= _real_flags(), used - _real_flags()


def test_the_result_line_is_found_among_other_output():
    text = (
        "benchmark_args=Namespace(...)\n"
        + json.dumps({"other": 1})
        + "\n"
        + json.dumps(RESULT)
        + "\n"
    )
    assert host_bench.parse_output(text) == RESULT
    assert host_bench.parse_output("Traceback ...\nValueError: boom\n") is None


def test_a_result_becomes_a_row():
    row = host_bench.level_from(8, 32, RESULT, "sglang.benchmark.serving")
    assert row.engine == "sglang.benchmark.serving" and row.completed == 31 and row.failed == 1
    assert row.output_tok_s == 634.9 and row.per_request_tok_s == pytest.approx(80.0)
    assert row.ttft_p50_ms == 81.0 and row.itl_p99_ms == 33.0 and row.input_tokens == 256
    assert row.accept_len == 3.1 and row.accept_source == "server_info"
