"""--save-baseline: the stored mapping, and hosts.yaml edited in place with its comments."""

from __future__ import annotations

from pathlib import Path

import pytest

from sglconsole import config
from sglconsole.bench import baseline
from sglconsole.bench.model import CONSOLE_ENGINE, LevelResult, Provenance, SweepResult
from sglconsole.errors import ConfigError
from sglconsole.state.status import baseline_for

HOSTS = """\
# the fleet -- hand-written, keep these comments
hosts:
  gpu1:
    address: gpu1.lab.example   # the big one
    servers:
      - {port: 30000, profile: fast}

profiles:
  # proven on 2x A6000
  fast:
    args: [--model-path, /m/Qwen3-8B]
    baseline:
      gen_throughput: 50      # from an old probe
      slow_fraction: 0.6
    description: keep me
  other:
    args: [--model-path, /m/other]
"""


def level(
    concurrency: int, tok_s: float | None, accept: float | None = 3.2, client: float = 0.0
) -> LevelResult:
    """A level whose server's decode lines said `tok_s` (None: not read); the load generator
    measured `client` (default: two thirds of it: it counts time to first token and the drain)."""
    return LevelResult(
        concurrency=concurrency,
        engine=CONSOLE_ENGINE,
        num_prompts=8,
        completed=8,
        failed=0,
        duration_s=5.0,
        output_tok_s=client or (tok_s or 60.0) * 2 / 3,
        server_tok_s=tok_s,
        per_request_tok_s=tok_s / concurrency if tok_s else None,
        ttft_p50_ms=80.04,
        ttft_p99_ms=90.0,
        itl_p50_ms=5.0,
        itl_p99_ms=9.0,
        accept_len=accept,
    )


def sweep(*levels: LevelResult) -> SweepResult:
    where = Provenance(
        host="gpu1",
        port=30000,
        measured_at="2026-11-20T10:00:00+0000",
        sglang_version="0.5.23",
        gpu_model="NVIDIA RTX A6000",
        gpu_count=2,
        profile="fast",
        pid=42,
        argv=[],
        engine=CONSOLE_ENGINE,
        prompts="ids",
        sampling_params={},
        input_len=256,
        output_len=128,
        seed=1,
        warmup=1,
    )
    return SweepResult(where, list(levels))


def test_the_lowest_level_fills_the_single_number_fields():
    value = baseline.baseline_value(sweep(level(8, 400.04), level(1, 70.06, 3.214)))
    assert (
        value["gen_throughput"] == 70.1
        and value["concurrency"] == 1
        and value["accept_len"] == 3.21
    )
    assert [lv["concurrency"] for lv in value["levels"]] == [1, 8]
    assert value["levels"][1] == {
        "concurrency": 8,
        "gen_throughput": 400.0,
        "accept_len": 3.2,
        "ttft_p50_ms": 80.0,
    }
    assert (
        value["gpu_model"] == "NVIDIA RTX A6000"
        and value["gpu_count"] == 2
        and value["sglang_version"] == "0.5.23"
    )
    assert value["input_len"] == 256 and value["output_len"] == 128 and "slow_fraction" not in value
    with pytest.raises(ValueError):
        baseline.baseline_value(sweep(level(1, 0.0)))


def test_saving_rewrites_only_the_profiles_baseline(tmp_path: Path):
    path = tmp_path / "hosts.yaml"
    path.write_text(HOSTS)
    previous = config.parse(HOSTS).profiles["fast"].baseline
    baseline.save(path, "fast", sweep(level(1, 70.0), level(4, 240.0), level(16, 250.0)), previous)
    text = path.read_text()
    head, tail = HOSTS.split("    baseline:\n")
    assert text.startswith(head) and text.endswith(
        "    description: keep me\n  other:\n    args: [--model-path, /m/other]\n"
    )
    saved = config.parse(text).profiles["fast"].baseline
    assert saved.slow_fraction == 0.6  # the operator's threshold survives
    assert [(lv.concurrency, lv.gen_throughput) for lv in saved.levels] == [
        (1, 70.0),
        (4, 240.0),
        (16, 250.0),
    ]
    assert saved.measured_at == "2026-11-20T10:00:00+0000" and saved.input_len == 256
    profile = config.parse(text).profiles["fast"]
    assert (
        baseline_for(profile, 1) == 70.0
        and baseline_for(profile, 5) == 240.0
        and baseline_for(profile, 30) == 250.0
    )


def test_the_stored_speed_is_the_servers_and_a_level_without_it_is_left_out():
    value = baseline.baseline_value(
        sweep(level(1, None, client=70.0), level(4, 240.0, client=150.0), level(16, 250.0))
    )
    assert value["gen_throughput"] == 240.0 and value["concurrency"] == 4  # never the client's
    assert [(lv["concurrency"], lv["gen_throughput"]) for lv in value["levels"]] == [
        (4, 240.0),
        (16, 250.0),
    ]
    assert baseline.unmeasured(sweep(level(1, None), level(4, 240.0))) == [1]
    with pytest.raises(ValueError, match="decode lines could not be read"):
        baseline.baseline_value(sweep(level(1, None, client=70.0)))  # a client figure is not one


def test_a_profile_that_does_not_exist_is_refused_and_nothing_is_written(tmp_path: Path):
    path = tmp_path / "hosts.yaml"
    path.write_text(HOSTS)
    with pytest.raises(ConfigError):
        baseline.save(path, "missing", sweep(level(1, 70.0)))  # a profile without args is invalid
    assert path.read_text() == HOSTS
