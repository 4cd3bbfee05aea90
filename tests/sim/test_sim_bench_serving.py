"""The simulated bench_serving's own arithmetic and output (no server needed)."""

from __future__ import annotations

import json

from sglconsole.bench.host_bench import level_from, parse_output
from sglconsole.sim.bench import serving as bench_serving
from sglconsole.sim.bench.metrics import Outcome, metrics, percentile


def test_percentile_interpolates_like_numpy():
    assert percentile([1, 2, 3, 4], 50) == 2.5 and percentile([1, 2, 3, 4], 99) == 3.97


def _result(accept: float | None) -> dict:
    args = bench_serving.parser().parse_args(
        ["--dataset-name", "random-ids", "--max-concurrency", "2"]
    )
    done = [
        Outcome(True, 32, 40, ttft=0.1, latency=0.9, itl=[0.02] * 39, started=t) for t in (0, 0.5)
    ]
    return bench_serving._result(args, metrics(done, 1.4), 1.4, accept, {"internal_states": [{}]})


def test_without_speculative_decoding_there_is_no_accept_length(capsys):
    result = _result(None)  # SGLang prints no row and writes null (this raised a TypeError)
    bench_serving._print(bench_serving.parser().parse_args([]), result, [])
    assert "Accept length" not in capsys.readouterr().out
    level = level_from(2, 2, parse_output(json.dumps(result)), "sglang.bench_serving")
    assert level.accept_len is None and level.completed == 2 and level.output_tokens == 80


def test_with_speculative_decoding_the_accept_length_is_printed(capsys):
    bench_serving._print(bench_serving.parser().parse_args([]), _result(3.25), [])
    assert "Accept length:                           3.25" in capsys.readouterr().out
