"""sglconsole.core.log_stats on real SGLang logs (tests/data/sglang_logs)."""

from __future__ import annotations

import json
import os
import statistics
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sglconsole.core.log_stats import Distribution, quantile, summarize

DATA = Path(__file__).resolve().parents[1] / "data" / "sglang_logs"


def log(name: str) -> list[str]:
    text = (DATA / name).read_text(encoding="utf-8")
    return [ln for ln in text.splitlines() if not ln.startswith("# ")]


def test_v0523_format_log():
    s = summarize(log("v0.5.23-format.log"))
    assert s.lines == 32 and s.records == 26
    assert s.counts == {"decode": 11, "prefill": 3, "ready": 1, "milestone": 8, "error": 3}
    # used: 10:01:32, :33, :34, 10:05:02, 10:05:03.482; skipped as first after idle:
    # 10:01:31 (first), 10:05:01 (after #running-req: 0) and the first line of three other ranks
    assert (s.decode_used, s.decode_idle_skipped, s.decode_not_running) == (5, 5, 1)
    tp = s.gen_throughput
    assert tp.n == 5 and tp.median == 301.47 and tp.min == 118.40 and tp.max == 402.55
    assert tp.p5 == pytest.approx(118.40 + (120.07 - 118.40) * 0.2)
    assert tp.p95 == pytest.approx(389.90 + (402.55 - 389.90) * 0.8)
    assert s.accept_len.median == 2.95 and s.accept_len.n == 5
    assert s.first_time == datetime(2026, 11, 2, 10, 0, 0)
    assert s.last_time == datetime(2026, 11, 2, 10, 30, 5)
    assert (s.ready_line, s.ready_time, s.time_to_ready_s) == (
        15,
        datetime(2026, 11, 2, 10, 0, 59),
        59.0,
    )
    assert [(e.line, e.error) for e in s.errors] == [
        (30, "watchdog"),
        (31, "health_check"),
        (32, "child_failed"),
    ]
    assert s.error_counts == {"watchdog": 1, "health_check": 1, "child_failed": 1}
    assert s.milestones["uvicorn_running"] == (11, datetime(2026, 11, 2, 10, 0, 57))
    assert list(s.milestones) == [
        "weights_begin", "weights_loaded", "kv_cache", "memory_pool_end",
        "cuda_graph_begin", "cuda_graph_end", "max_total_num_tokens", "uvicorn_running",
    ]  # fmt: skip


def test_gap_over_30s_drops_the_artefact_line():
    # real 0.5.18 log: 09:05:37 -> 09:06:21 is 44 s; that line reports 3.22 tok/s
    s = summarize(log("v0.5.18-2026-08_issue36081_swa-ep.log"))
    assert s.decode_idle_skipped == 2 and s.decode_used == 1
    assert s.gen_throughput.median == 140.78 and s.gen_throughput.n == 1
    assert s.accept_len.median == 4.42


def test_first_decode_line_of_a_log_is_left_out():
    # real 0.5.17 log: the first decode line says 3.08 tok/s
    s = summarize(log("v0.5.17-2026-08_pr34924_swa-cap-len.log"))
    assert s.decode_idle_skipped == 1 and s.decode_used == 3
    assert s.gen_throughput.min == 373.22 and s.gen_throughput.median == 392.30


def test_time_only_prefixes_still_give_gaps():
    s = summarize(log("v0.2-2024-08_issue1270.log"))
    assert s.first_time is None and s.time_to_ready_s is None
    assert (s.decode_used, s.decode_idle_skipped) == (9, 1)
    assert s.gen_throughput.median == 238.82
    assert s.accept_len is None


def test_time_of_day_gap_wraps_midnight():
    line = (
        "[{} TP0] Decode batch. #running-req: 2, #token: 9, token usage: 0.00, "
        "gen throughput (token/s): {}, #queue-req: 0"
    )
    s = summarize(
        [
            line.format("23:59:50", "1.00"),
            line.format("00:00:05", "50.00"),
            line.format("00:01:00", "0.50"),
        ]
    )
    assert s.decode_used == 1 and s.gen_throughput.median == 50.0  # 15 s across midnight; then 55 s


def test_dp_ranks_are_separate_streams():
    # real 0.4.6 DP-attention log: each line is the first of its DP rank
    s = summarize(log("v0.4.6-2025-05_pr6081_dp-mtp.log"))
    assert (s.decode_used, s.decode_idle_skipped) == (0, 5)
    assert s.gen_throughput is None and s.accept_len is None
    twice = summarize(log("v0.4.6-2025-05_pr6081_dp-mtp.log") * 2)
    assert twice.decode_used == 5 and twice.accept_len.median == 2.86


def test_errors_keep_line_numbers():
    s = summarize(log("v0.4.0-2024-12_issue2468_startup.log"))
    assert [(e.line, e.error, e.time) for e in s.errors] == [
        (11, "init_failed", datetime(2024, 12, 13, 1, 47, 34)),
        (14, "exception", None),
        (16, "killed", None),
    ]
    assert s.ready_line is None and s.counts["milestone"] == 6


def test_time_to_ready_counts_from_the_first_timestamped_line():
    lines = [
        "INFO 03-06 10:05:08 __init__.py:190] Automatically detected platform cuda.",
        "[2026-01-01 00:00:00] server_args=ServerArgs(model_path='m', tp_size=1)",
        "[2026-01-01 00:00:30 TP0] Load weight begin. avail mem=70.00 GB",
        "[2026-01-01 00:01:05] The server is fired up and ready to roll!",
        "[2026-01-01 00:02:00] The server is fired up and ready to roll!",
    ]
    s = summarize(lines)
    assert s.first_time == datetime(2026, 1, 1)
    assert (s.ready_line, s.time_to_ready_s) == (4, 65.0)
    assert s.counts["ready"] == 2


def test_to_dict_and_text():
    s = summarize(log("v0.5.23-format.log"))
    d = json.loads(json.dumps(s.to_dict(), allow_nan=False))
    assert d["counts"]["decode"] == 11
    assert d["gen_throughput"]["median"] == 301.47
    assert d["errors"][0] == {
        "line": 30,
        "error": "watchdog",
        "message": "Scheduler watchdog timeout (self.watchdog_timeout=300, self.soft=False)",
        "time": "2026-11-02T10:30:00",
    }
    assert d["milestones"]["kv_cache"] == {"line": 3, "time": "2026-11-02T10:00:42"}
    assert d["time_to_ready_s"] == 59.0


def test_empty_input():
    s = summarize([])
    assert s.lines == 0 and s.gen_throughput is None and s.errors == []
    assert json.dumps(s.to_dict())


def test_quantile_matches_statistics():
    vals = sorted([3.0, 1.0, 4.0, 1.5, 9.0, 2.6])
    assert quantile(vals, 0.5) == statistics.median(vals)
    assert quantile(vals, 0.0) == 1.0 and quantile(vals, 1.0) == 9.0
    assert quantile([7.0], 0.95) == 7.0
    assert Distribution.of([float("nan"), float("inf")]) is None


ALL = [ln for p in sorted(DATA.glob("*.log")) for ln in log(p.name)]


@settings(
    max_examples=int(os.environ.get("SGLCONSOLE_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.lists(st.one_of(st.text(max_size=200), st.sampled_from(ALL)), max_size=60), st.data())
def test_summarize_never_raises(lines, data):
    if lines and data.draw(st.booleans()):
        i = data.draw(st.integers(0, len(lines) - 1))
        lines[i] = lines[i][: data.draw(st.integers(0, len(lines[i])))]
    s = summarize(lines)
    assert s.lines == len(lines)
    json.dumps(s.to_dict(), allow_nan=False)
