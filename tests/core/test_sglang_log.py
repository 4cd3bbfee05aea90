"""sglconsole.core.sglang_log against real SGLang log lines (tests/data/sglang_logs, sources in
each file)."""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import pickle
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sglconsole.core.sglang_log import iter_records, parse_line, parse_time_prefix
from sglconsole.core.sglang_log import shapes as sglang_log_shapes
from sglconsole.core.sglang_log.batch import batch_record
from sglconsole.core.sglang_log.prefix import clean_line, parse_header
from sglconsole.core.sglang_log.record import LogRecord

DATA = Path(__file__).resolve().parents[1] / "data" / "sglang_logs"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

FIELDS = (
    "kind", "time", "dp_rank", "tp_rank", "pp_rank", "ep_rank", "running_req", "token",
    "token_usage", "mamba_usage", "swa_token_usage", "accept_len", "accept_rate", "cuda_graph",
    "gen_throughput", "queue_req", "new_seq", "new_token", "cached_token", "input_throughput",
    "message", "milestone", "error", "extra",
)  # fmt: skip


def log(name: str) -> list[str]:
    """The lines of a fixture file, without our '# ' source headers."""
    text = (DATA / name).read_text(encoding="utf-8")
    return [ln for ln in text.splitlines() if not ln.startswith("# ")]


def fixture_lines(name: str) -> list[str]:
    """Verbatim lines kept in tests/fixtures/sglang-lines (too long for the source), no comments."""
    text = (FIXTURES / "sglang-lines" / name).read_text(encoding="utf-8")
    return [ln for ln in text.splitlines() if not ln.startswith("# ")]


ALL_LINES = [(p.name, ln) for p in sorted(DATA.glob("*.log")) for ln in log(p.name)]


def generic(text: str) -> LogRecord | None:
    """The reference parser for batch lines: no compiled shapes involved."""
    text = clean_line(text)
    i = text.find("Decode batch")
    if i >= 0:
        return batch_record("decode", text, i, 12)
    p = text.find("Prefill batch")
    if p >= 0:
        return batch_record("prefill", text, p, 13)
    return parse_line(text)


def fields_of(rec: LogRecord, **expected):
    """The record's values for the expected keys (None-valued keys included)."""
    return {k: getattr(rec, k) for k in expected}


# --------------------------------------------------------------------------
# Decode lines, one per format generation


@pytest.mark.parametrize(
    ("name", "index", "expected"),
    [
        # 0.2.x: time-only prefix, "Decode batch."
        (
            "v0.2-2024-08_issue1270.log", 3,
            dict(kind="decode", time=None, tp_rank=0, dp_rank=None, running_req=1, token=3902,
                 token_usage=0.0, gen_throughput=333.97, queue_req=0, cuda_graph=None,
                 accept_len=None, extra={"time_of_day": "04:40:56"}),
        ),
        # 0.4.3: dated prefix, "Decode batch."
        (
            "v0.4.3-2025-02_issue3909.log", 0,
            dict(time=datetime(2025, 2, 27, 4, 46, 39), tp_rank=0, running_req=8, token=62531,
                 token_usage=0.12, gen_throughput=186.64, queue_req=0, extra={}),
        ),
        # 0.4.3.post: largest-len and a trailing ", "
        (
            "v0.4.3-2025-03_issue4407_largest-len.log", 4,
            dict(running_req=301, token=154749, token_usage=0.37, gen_throughput=6695.80,
                 queue_req=0, extra={"largest_len": 0}),
        ),
        # 0.4.6: DP attention tags, accept len, cuda graph
        (
            "v0.4.6-2025-05_pr6081_dp-mtp.log", 1,
            dict(time=datetime(2025, 5, 31, 18, 31, 21), dp_rank=6, tp_rank=6, ep_rank=None,
                 running_req=8, token=36267, token_usage=0.12, accept_len=2.86, accept_rate=None,
                 cuda_graph=True, gen_throughput=168.28, queue_req=0),
        ),
        # 0.4.9: trailing ","
        (
            "v0.4.9-2025-07_issue8513.log", 2,
            dict(kind="decode", running_req=1, token=53, cuda_graph=True, gen_throughput=1.07,
                 queue_req=0),
        ),
        # 0.5.5 test data: Ray actor prefix, forward-iteration counter
        (
            "v0.5.5-2025-11_log-parser-test.log", 1,
            dict(time=datetime(2025, 10, 31, 3, 45, 20), tp_rank=0, running_req=78, token=432100,
                 token_usage=0.27, cuda_graph=True, gen_throughput=7269.16, queue_req=0,
                 extra={"pid": 111711, "ip": "10.15.36.1", "iter": 39913}),
        ),
        (
            "v0.5.5-2025-11_log-parser-test.log", 2,
            dict(dp_rank=6, tp_rank=6, ep_rank=6, pp_rank=None, running_req=251, token=2811200,
                 token_usage=1.0, queue_req=655, extra={}),
        ),
        # 0.5.9: "Decode batch," and no comma at the end
        (
            "v0.5.9-2026-03_pr20766_dp16.log", 2,
            dict(dp_rank=15, tp_rank=15, running_req=12, token=768, gen_throughput=3.82,
                 queue_req=0),
        ),
        # 0.5.15: hybrid mamba pool on NPU
        (
            "v0.5.15-2026-07_pr30047_mamba-npu.log", 4,
            dict(running_req=40, token=350592, token_usage=0.74, mamba_usage=0.80, accept_len=3.13,
                 accept_rate=0.71, cuda_graph=None, gen_throughput=155.34, queue_req=0,
                 extra={"mamba_num": 160, "npu_graph": True}),
        ),
        # 0.5.15 NPU with EP tag
        (
            "v0.5.15-2026-07_sgl-kernel-npu-pr608_ep.log", 3,
            dict(tp_rank=0, ep_rank=0, running_req=23, token=227968, accept_len=2.63,
                 accept_rate=0.54, gen_throughput=631.96, queue_req=3),
        ),
        # 0.5.17: hybrid SWA pool, cap len
        (
            "v0.5.17-2026-08_pr34924_swa-cap-len.log", 1,
            dict(running_req=1, token=512, token_usage=0.0, swa_token_usage=0.0, accept_len=4.22,
                 accept_rate=0.65, cuda_graph=True, gen_throughput=3.08,
                 extra={"swa_token": 512, "cap_len": 6.0}),
        ),
        # 0.5.18: a pasted file path in front of the prefix
        (
            "v0.5.18-2026-08_issue36081_swa-ep.log", 0,
            dict(time=datetime(2026, 8, 23, 9, 5, 37), tp_rank=0, ep_rank=0, running_req=1,
                 token=165376, token_usage=0.02, swa_token_usage=0.0, accept_len=5.30,
                 accept_rate=0.86, gen_throughput=167.04, extra={"swa_token": 768}),
        ),
        # 0.5.23 format: milliseconds + forward iteration
        (
            "v0.5.23-format.log", 25,
            dict(time=datetime(2026, 11, 2, 10, 5, 3, 482000), tp_rank=0, running_req=1, token=4608,
                 accept_len=2.91, accept_rate=0.64, gen_throughput=120.07, extra={"iter": 1834}),
        ),
        # 0.5.23 format: disaggregated decode queues
        (
            "v0.5.23-format.log", 27,
            dict(dp_rank=0, tp_rank=0, ep_rank=0, running_req=2, token=8192, token_usage=0.01,
                 cuda_graph=True, gen_throughput=77.10,
                 extra={"pre_allocated_usage": 0.0, "prealloc_req": 0, "transfer_req": 1,
                        "retracted_req": 0}),
        ),
        # 0.5.23 format: every rank tag, cuda graph False, MFU estimates
        (
            "v0.5.23-format.log", 28,
            dict(pp_rank=1, tp_rank=3, ep_rank=3, dp_rank=None, running_req=9, cuda_graph=False,
                 gen_throughput=640.0, queue_req=2,
                 extra={"attn_cp_rank": 0, "moe_dp_rank": 1, "est_decode_tflops_s_per_gpu": 41.27,
                        "est_read_bw_gb_s_per_gpu": 2150.40, "est_write_bw_gb_s_per_gpu": 3.10}),
        ),
    ],
)  # fmt: skip
def test_decode_lines(name, index, expected):
    line = log(name)[index]
    assert "Decode batch" in line
    for _ in range(2):  # the second pass goes through the compiled shape
        rec = parse_line(line)
        assert rec is not None and rec.kind == "decode"
        assert fields_of(rec, **expected) == expected
        assert rec == generic(line)


@pytest.mark.parametrize(
    ("name", "index", "expected"),
    [
        (
            "v0.3-2024-10_issue1612.log", 6,
            dict(kind="prefill", new_seq=4, new_token=8192, cached_token=291, token_usage=0.04,
                 running_req=1, queue_req=38, input_throughput=None,
                 extra={"time_of_day": "16:43:29", "cache_hit_rate_pct": 2.76}),
        ),
        (
            "v0.4.6-2025-05_issue6291.log", 6,
            dict(time=datetime(2025, 5, 14, 9, 31, 43), tp_rank=None, new_seq=4, new_token=4,
                 cached_token=16030, token_usage=0.30, running_req=30, queue_req=0),
        ),
        # a tqdm bar glued in front of the prefix
        (
            "v0.5.10-2026-04_pr22166_prefill-graph.log", 4,
            dict(time=datetime(2026, 4, 5, 20, 2, 49), new_seq=1, new_token=172, cached_token=0,
                 running_req=31, cuda_graph=True, input_throughput=4042.20, extra={}),
        ),
        (
            "v0.5.15-2026-07_pr30047_mamba-npu.log", 2,
            dict(new_seq=16, new_token=9088, cached_token=1114624, token_usage=0.74,
                 mamba_usage=0.80, running_req=10, input_throughput=2114.79,
                 extra={"pending_token": 0, "npu_graph": False}),
        ),
        (
            "v0.5.18-2026-08_issue36081_swa-ep.log", 3,
            dict(tp_rank=0, ep_rank=0, new_token=8192, token_usage=0.0, swa_token_usage=0.01,
                 cuda_graph=False, input_throughput=824.28, extra={"pending_token": 157704}),
        ),
    ],
)  # fmt: skip
def test_prefill_lines(name, index, expected):
    line = log(name)[index]
    for _ in range(2):
        rec = parse_line(line)
        assert rec is not None and rec.kind == "prefill"
        assert fields_of(rec, **expected) == expected
        assert rec == generic(line)


def test_every_batch_line_parses_and_fast_path_matches_generic():
    for name, line in ALL_LINES:
        if "Decode batch" in line or "Prefill batch" in line:
            first, second = parse_line(line), parse_line(line)
            assert first is not None and first.kind in ("decode", "prefill"), (name, line)
            assert first == second == generic(line), (name, line)
            assert first.running_req is not None and first.queue_req is not None, (name, line)


def test_interleaved_layouts_compile_once_each(monkeypatch):
    """A mixed-version fleet interleaves many layouts: each compiles once, none evicts another.

    (An 8-entry cache recompiled on nearly every line of this input, ~10x slower.)
    """
    compiled: list[tuple[str, tuple[str, ...]]] = []
    real_compile = sglang_log_shapes.compile_shape

    def counting_compile(kind, keys, percent):
        compiled.append((kind, keys))
        return real_compile(kind, keys, percent)

    monkeypatch.setattr(sglang_log_shapes, "compile_shape", counting_compile)
    sglang_log_shapes.forget_shapes()
    logs = [log(path.name) for path in sorted(DATA.glob("*.log"))]
    interleaved = [line for lines in itertools.zip_longest(*logs) for line in lines if line]
    for _ in range(3):
        records = [parse_line(line) for line in interleaved]
    assert len(set(compiled)) > 8  # more layouts than the old cache held
    assert len(compiled) == len(set(compiled))  # and none compiled twice
    assert records == [generic(line) for line in interleaved]


# --------------------------------------------------------------------------
# Start-up: milestones and ready


@pytest.mark.parametrize(
    ("name", "index", "milestone", "extra"),
    [
        ("v0.4.0-2024-12_issue2468_startup.log", 0, "weights_loaded",
         {"type": "MistralForCausalLM", "dtype": "torch.bfloat16", "avail_mem": 9.69}),
        ("v0.4.0-2024-12_issue2468_startup.log", 3, "cuda_graph_end", {"elapsed": 2.19}),
        ("v0.4.0-2024-12_issue2468_startup.log", 4, "max_total_num_tokens",
         {"max_total_num_tokens": 56524, "max_prefill_tokens": 16384,
          "max_running_requests": 2049, "context_len": 32768}),
        ("v0.4.0-2024-12_issue2468_startup.log", 8, "uvicorn_running",
         {"url": "http://0.0.0.0:30000", "port": 30000}),
        ("v0.4.3-2025-03_issue4339_dp-startup.log", 4, "max_total_num_tokens",
         {"max_total_num_tokens": 935444, "chunked_prefill_size": 8192, "max_prefill_tokens": 16384,
          "max_running_requests": 4097, "context_len": 32768}),
        ("v0.4.4-2025-03_pr4826_startup.log", 0, "weights_loaded",
         {"type": "Gemma3ForConditionalGeneration", "dtype": "torch.bfloat16",
          "avail_mem": 131.08, "mem_usage": 8.13}),
        ("v0.4.4-2025-03_pr4826_startup.log", 1, "kv_cache",
         {"tokens": 834615, "k_size": 54.12, "v_size": 54.12}),
        ("v0.4.4-2025-03_pr4826_startup.log", 4, "cuda_graph_begin", {"avail_mem": 13.95}),
        ("v0.5.5-2025-11_pr11830_startup.log", 1, "cuda_graph_end",
         {"elapsed": 5.92, "mem_usage": 1.44, "avail_mem": 37.06}),
        ("v0.5.5-2025-11_pr11830_startup.log", 2, "max_total_num_tokens",
         {"max_total_num_tokens": 2261377, "chunked_prefill_size": 16384,
          "max_prefill_tokens": 16384, "max_running_requests": 4096, "context_len": 128000,
          "available_gpu_mem": 37.06}),
        ("v0.5.23-format.log", 0, "weights_begin", {"avail_mem": 139.27}),
        ("v0.5.23-format.log", 1, "weights_loaded",
         {"elapsed": 40.12, "type": "Qwen3ForCausalLM", "quant": "fp8", "avail_mem": 123.80,
          "mem_usage": 15.47}),
        ("v0.5.23-format.log", 2, "kv_cache",
         {"dtype": "torch.bfloat16", "tokens": 1642108, "k_size": 56.38, "v_size": 56.38}),
        ("v0.5.23-format.log", 3, "memory_pool_end", {"avail_mem": 10.21}),
        ("v0.5.4-2025-10_pr11716_kv-capture.log", 0, "kv_cache",
         {"tokens": 2795207, "k_size": 53.31, "v_size": 53.31}),
        ("v0.5.23-format.log", 4, "cuda_graph_begin",
         {"graph": "target decode", "backend": "full", "num_tokens_per_req": 1,
          "avail_mem": 10.01}),
        ("v0.5.23-format.log", 5, "cuda_graph_end",
         {"graph": "target decode", "bs": "[1, 2, 4, 8, 16, 24, 32]", "elapsed": 11.84,
          "mem_usage": 0.92, "avail_mem": 9.09}),
    ],
)  # fmt: skip
def test_milestones(name, index, milestone, extra):
    rec = parse_line(log(name)[index])
    assert rec is not None and rec.kind == "milestone"
    assert rec.milestone == milestone
    assert rec.extra == extra


def test_other_cache_allocations():
    # 0.5.23 memory_pool.py: an MLA pool reports one "KV size"; a mamba pool its own line, no
    # commas between parts
    mla = parse_line(
        "[2026-01-01 00:00:42 TP0] KV Cache is allocated. dtype: torch.bfloat16, #tokens: 90000, "
        "KV size: 5.00 GB"
    )
    assert (mla.milestone, mla.extra) == (
        "kv_cache",
        {"dtype": "torch.bfloat16", "tokens": 90000, "kv_size": 5.0},
    )
    mamba = parse_line(
        "[2026-01-01 00:00:42 TP0] Mamba Cache is allocated. max_mamba_cache_size: 656, "
        "conv_state size: 1.23GB, ssm_state size: 4.56GB "
        "intermediate_ssm_state_cache size: 0.00GB "
        "intermediate_conv_window_cache size: 0.00GB "
    )
    assert mamba.milestone == "mamba_cache"
    assert mamba.extra == {
        "max_mamba_cache_size": 656, "conv_state_size": 1.23, "ssm_state_size": 4.56,
        "intermediate_ssm_state_cache_size": 0.0, "intermediate_conv_window_cache_size": 0.0,
    }  # fmt: skip


def test_milestone_keeps_ranks_time_and_clean_message():
    line = log("v0.5.13-2026-05_pr17392_ep-capture.log")[0]
    rec = parse_line(line)
    assert (rec.dp_rank, rec.tp_rank, rec.ep_rank) == (3, 3, 3)
    assert rec.time == datetime(2026, 5, 7, 5, 56, 32)
    assert (
        rec.message
        == "Capture cuda graph begin. This can take up to several minutes. avail mem=13.56 GB"
    )
    glued = parse_line(log("v0.4.3-2025-03_issue4339_dp-startup.log")[4])  # after a tqdm bar
    assert (glued.milestone, glued.dp_rank, glued.tp_rank) == ("max_total_num_tokens", 0, 0)
    uvicorn = parse_line(log("v0.5.23-format.log")[10])
    assert uvicorn.message == "Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)"


def test_ready_line():
    rec = parse_line(log("v0.5.23-format.log")[14])
    assert rec.kind == "ready"
    assert rec.time == datetime(2026, 11, 2, 10, 0, 59)
    assert rec.message == "The server is fired up and ready to roll!"
    bare = parse_line("The server is fired up and ready to roll!")
    assert bare.kind == "ready" and bare.time is None


# --------------------------------------------------------------------------
# Errors


def test_error_classes_in_real_logs():
    errors = log("v0.4.x-2025-errors.log")
    got = [(r.error, r.tp_rank, r.message) for r in map(parse_line, errors) if r is not None]
    assert got == [
        ("traceback", 2, "Scheduler hit an exception: Traceback (most recent call last):"),
        ("nccl", None,
         "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)"),
        ("watchdog", 4, "Watchdog timeout (self.watchdog_timeout=300)"),
        ("watchdog", 0, "Watchdog timeout (self.watchdog_timeout=300)"),
        ("child_failed", None,
         "Received sigquit from a child proces. It usually means the child failed."),
        ("killed", None, "Killed"),
        ("unrecognized_arguments", None,
         "launch_server.py: error: unrecognized arguments: --reasoning_parser kimi_k2"),
    ]  # fmt: skip
    startup = [parse_line(x) for x in log("v0.4.0-2024-12_issue2468_startup.log")]
    assert [(r.error, r.extra) for r in startup if r is not None and r.kind == "error"] == [
        ("init_failed", {}),  # "Initialization failed. warmup error: Traceback ..."
        ("exception", {"exception_type": "AssertionError"}),
        ("killed", {}),
    ]
    v523 = [parse_line(x) for x in log("v0.5.23-format.log")[-3:]]
    assert [r.error for r in v523] == ["watchdog", "health_check", "child_failed"]
    assert v523[0].time == datetime(2026, 11, 2, 10, 30)


def test_torch_cuda_oom_fixture():
    lines = (FIXTURES / "torch-cuda-oom-h200.txt").read_text(encoding="utf-8").splitlines()
    recs = [parse_line(ln) for ln in lines]
    assert [r.error if r else None for r in recs] == ["cuda_oom", "traceback", None, "cuda_oom"]
    assert recs[0].message.startswith(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 200.00 GiB."
    )
    assert recs[3].message.startswith(
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 500.00 GiB."
    )


@pytest.mark.parametrize(
    ("error", "line"),
    [tuple(row.split("\t", 1)) for row in fixture_lines("errors.tsv")],
)
def test_error_lines(error, line):
    rec = parse_line(line)
    assert rec is not None and rec.kind == "error" and rec.error == error


# --------------------------------------------------------------------------
# What is not a record


@pytest.mark.parametrize(
    "line",
    [
        *fixture_lines("no-record.txt"),
        "",
        "Decode batch",
        "[2026-04-08 14:05:21 TP0] Decode batch,",
    ],
)
def test_lines_without_records(line):
    assert parse_line(line) is None


# --------------------------------------------------------------------------
# Prefixes, escapes, odd input


def test_ansi_colour_codes_are_ignored():
    plain = log("v0.5.9-2026-03_pr20766_dp16.log")[0]
    coloured = "\x1b[32m" + plain[:26] + "\x1b[0m\x1b[1m" + plain[26:] + "\x1b[0m\x1b]0;title\x07"
    assert parse_line(coloured) == parse_line(plain)
    assert parse_line("\x1b[31mKilled\x1b[0m").error == "killed"


def test_prefix_variants():
    body = (
        "Decode batch, #running-req: 3, #token: 9, token usage: 0.01, cuda graph: True, "
        "gen throughput (token/s): 12.50, #queue-req: 1"
    )
    metrics_mixin = "2025-12-04 20:35:53 INFO 151972 [scheduler_metrics_mixin.py:287]"
    cases = {
        f"[2026-01-02 03:04:05] {body}":
            (datetime(2026, 1, 2, 3, 4, 5), None, None, None, None),
        f"[2026-01-02 03:04:05 EP3 PP0 DP1 TP2] {body}":
            (datetime(2026, 1, 2, 3, 4, 5), 1, 2, 0, 3),
        f"[2026-01-02 03:04:05.250 TP1] {body}":
            (datetime(2026, 1, 2, 3, 4, 5, 250000), None, 1, None, None),
        f"{metrics_mixin} {body}":
            (datetime(2025, 12, 4, 20, 35, 53), None, None, None, None),
        # impossible date: no time, still parsed
        f"[2026-13-02 03:04:05 TP0] {body}": (None, None, 0, None, None),
    }  # fmt: skip
    for line, (t, dp, tp, pp, ep) in cases.items():
        for _ in range(2):
            rec = parse_line(line)
            assert (rec.time, rec.dp_rank, rec.tp_rank, rec.pp_rank, rec.ep_rank) == (
                t,
                dp,
                tp,
                pp,
                ep,
            ), line
            assert (rec.running_req, rec.queue_req, rec.gen_throughput) == (3, 1, 12.5), line
            assert rec == generic(line)


def test_bad_values_go_to_extra_not_fields():
    rec = parse_line(
        "[2026-01-02 03:04:05 TP0] Decode batch, #running-req: many, #token: 12, "
        "token usage: 1.2.3, cuda graph: maybe, gen throughput (token/s): 5.00, #queue-req: 0"
    )
    assert (rec.running_req, rec.token, rec.token_usage, rec.cuda_graph) == (None, 12, None, None)
    assert rec.extra == {"running_req": "many", "token_usage": "1.2.3", "cuda_graph": "maybe"}


def test_bytes_newlines_and_carriage_returns():
    line = log("v0.4.3-2025-02_issue3909.log")[0]
    ref = parse_line(line)
    assert parse_line(line.encode()) == ref
    assert parse_line(line + "\n") == ref
    assert parse_line(line + "\r\n") == ref
    assert (
        parse_line(
            "Loading safetensors: 50%\r"
            "[2025-03-09 00:57:15 TP4] Watchdog timeout (self.watchdog_timeout=300)"
        ).error
        == "watchdog"
    )


def test_parse_time_prefix():
    assert parse_time_prefix(
        "[2025-11-30 11:18:05] INFO:     Started server process [177326]"
    ) == datetime(2025, 11, 30, 11, 18, 5)
    assert parse_time_prefix("no prefix") is None
    assert parse_time_prefix(b"bytes") is None  # type: ignore[arg-type]


def test_iter_records_numbers_lines_from_one():
    lines = log("v0.4.0-2024-12_issue2468_startup.log")
    got = [(n, r.kind) for n, r in iter_records(ln + "\n" for ln in lines)]
    assert got[:3] == [(1, "milestone"), (2, "milestone"), (3, "milestone")]
    assert got[-1] == (16, "error")


# --------------------------------------------------------------------------
# The record type


def test_record_is_frozen_slotted_with_exact_fields():
    rec = parse_line(log("v0.5.23-format.log")[16])
    assert type(rec) is LogRecord
    assert tuple(f.name for f in dataclasses.fields(LogRecord)) == FIELDS
    assert not hasattr(rec, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        rec.token = 1  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(rec)) == rec
    assert dataclasses.replace(rec, token=1).token == 1
    assert LogRecord(kind="ready").extra == {}


def test_to_dict_is_json_with_every_key():
    for _, line in ALL_LINES:
        rec = parse_line(line)
        if rec is None:
            continue
        d = rec.to_dict()
        assert tuple(d) == FIELDS
        json.dumps(d, allow_nan=False)
        if rec.time is not None:
            assert datetime.fromisoformat(d["time"]) == rec.time
    d = parse_line(log("v0.5.23-format.log")[16]).to_dict()
    assert d["time"] == "2026-11-02T10:01:31" and d["extra"] == {} and d["message"] is None


# --------------------------------------------------------------------------
# Fuzzing: never raise; the compiled shapes agree with the generic parser

# SGLCONSOLE_FUZZ_EXAMPLES=20000 for a deeper run
FUZZ = settings(
    max_examples=int(os.environ.get("SGLCONSOLE_FUZZ_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
REAL = [ln for _, ln in ALL_LINES if ln]


@FUZZ
@given(st.text())
def test_never_raises_on_text(text):
    parse_line(text)
    parse_header(text, len(text))


@FUZZ
@given(st.binary())
def test_never_raises_on_bytes(data):
    parse_line(data.decode("utf-8", "replace"))
    parse_line(data)  # type: ignore[arg-type]


JUNK = st.sampled_from(
    [
        "\x1b[31m",
        "\x1b[0m",
        "\ufffd",
        "\x00",
        ",",
        ", ",
        ": ",
        "]",
        "[",
        "%",
        "\r",
        "\n",
        " [12]",
        "9" * 40,
        "é",
    ]
)


@FUZZ
@given(st.sampled_from(REAL), st.data())
def test_never_raises_on_mutated_real_lines(line, data):
    cut = data.draw(st.integers(0, len(line)))
    parse_line(line[:cut])
    pos = data.draw(st.integers(0, len(line)))
    junk = data.draw(st.one_of(JUNK, st.text(max_size=8)))
    mutated = line[:pos] + junk + line[pos:]
    rec = parse_line(mutated)
    if rec is not None and rec.kind in ("decode", "prefill"):
        assert rec == generic(mutated)
    parse_line(line * data.draw(st.integers(1, 3)))


def test_huge_lines():
    big = log("v0.4.3-2025-02_issue3909.log")[0] + ", x: 1" * 50_000
    rec = parse_line(big)
    assert rec.running_req == 8 and rec.extra["x"] == 1
    assert parse_line("Traceback " + "a" * 2_000_000) is None
    assert parse_line("[" * 100_000) is None


KEYS = [
    "#running-req", "#token", "#full token", "token usage", "full token usage", "#swa token",
    "swa token usage", "mamba num", "mamba usage", "accept len", "accept rate", "cap len",
    "pre-allocated usage", "#prealloc-req", "#transfer-req", "#retracted-req", "cuda graph",
    "npu graph", "gen throughput (token/s)", "#queue-req", "#pending-token", "cache hit rate",
]  # fmt: skip
VALUES = st.one_of(
    st.integers(0, 10**9).map(str),
    st.floats(0, 1e6, allow_nan=False).map(lambda f: f"{f:.2f}"),
    st.sampled_from(
        [
            "True",
            "False",
            "0.00",
            "1.00",
            "2.76%",
            "",
            " 5",
            "5 ",
            "1.2.3",
            "-1",
            "nan",
            "9" * 30,
            "x",
        ]
    ),
)
PREFIXES = st.sampled_from([
    "[2026-05-01 09:00:00 TP0] ", "[2026-05-01 09:00:00] ", "[2026-05-01 09:00:00 DP1 TP1 EP1] ",
    "[09:00:00 TP0] ", "(SGLangEngine pid=7) [2026-05-01 09:00:00 TP0] ",
    "[2026-05-01 09:00:00.5 TP0] ",
    "[2026-02-30 09:00:00 TP0] ", "[2026-05-01T09:00:00 TP0] ", "[2026-05-01 09:00:00 tp0] ", "",
])  # fmt: skip
SEPS = st.sampled_from([", ", ". ", " [77], ", ",  ", " [x], ", ": "])
TAILS = st.sampled_from(["", ", ", ",", " ", ", est. decode TFLOPS/s (per GPU): 1.00"])


@FUZZ
@given(
    PREFIXES, st.sampled_from(["Decode batch", "Prefill batch"]), SEPS,
    st.lists(st.tuples(st.sampled_from(KEYS), VALUES), min_size=1, max_size=10), TAILS,
    st.lists(VALUES, min_size=1, max_size=10),
)  # fmt: skip
def test_compiled_shapes_agree_with_generic_parser(prefix, keyword, sep, pairs, tail, other_values):
    line = prefix + keyword + sep + ", ".join(f"{k}: {v}" for k, v in pairs) + tail
    # teach the parser this key layout with other values, then parse the line itself
    values = (other_values * len(pairs))[: len(pairs)]
    parse_line(
        prefix
        + keyword
        + ", "
        + ", ".join(f"{k}: {v}" for (k, _), v in zip(pairs, values, strict=True))
    )
    assert parse_line(line) == generic(line)


def test_startup_wording_of_newer_releases():
    """0.5.21 renamed the parallel-init milestone (srt/distributed/bootstrap.py: 'Init parallel
    begin.', 'Init parallel ends. elapsed=...'); 0.5.23's KV pool may carry a label and, once
    capture has run, says 'VA upper bound' instead of 'is allocated' (mem_cache/memory_pool.py)."""
    lines = {
        "[2026-12-01 10:00:00 TP0] Init parallel begin.": ("dist_init_begin", {}),
        "[2026-12-01 10:00:01 TP0] Init parallel ends. elapsed=1.23 s": (
            "dist_init_end",
            {"elapsed": 1.23},
        ),
        "[2026-12-01 10:00:01] Init torch distributed ends. elapsed=0.22 s, mem usage=0.09 GB": (
            "dist_init_end",
            {"elapsed": 0.22, "mem_usage": 0.09},
        ),
        "[2026-12-01 10:00:02 TP0] draft KV Cache is allocated. dtype: torch.bfloat16, "
        "#tokens: 5000, K size: 0.50 GB, V size: 0.50 GB": (
            "kv_cache",
            {"dtype": "torch.bfloat16", "tokens": 5000, "k_size": 0.5, "v_size": 0.5},
        ),
        "[2026-12-01 10:00:09 TP0] KV Cache VA upper bound. dtype: torch.bfloat16, "
        "#tokens: 90000, KV size: 5.00 GB": (
            "kv_cache",
            {"dtype": "torch.bfloat16", "tokens": 90000, "kv_size": 5.0},
        ),
        "[2026-12-01 10:00:03 TP0] Capture target prefill CUDA graph begin. backend=breakable, "
        "num_tokens=[1, 2, 4], avail mem=10.00 GB": (
            "cuda_graph_begin",
            {"graph": "target prefill", "backend": "breakable", "num_tokens": "[1, 2, 4]",
             "avail_mem": 10.0},
        ),
    }  # fmt: skip
    for text, (milestone, extra) in lines.items():
        record = parse_line(text)
        assert record is not None and record.kind == "milestone", text
        assert (record.milestone, record.extra) == (milestone, extra), text
