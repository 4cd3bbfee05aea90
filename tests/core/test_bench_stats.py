"""Pure pieces of bench: percentiles, a level's row, the decode-line cross-check, warnings,
prompts, the chart."""

from __future__ import annotations

import statistics

import pytest

from sglconsole.bench import decode, prompts, stats
from sglconsole.bench.model import CONSOLE_ENGINE, LevelResult, RequestRecord, SweepSettings
from sglconsole.bench.render import bar
from sglconsole.bench.sweep import level_warnings, with_server_side
from sglconsole.sim.server import logfmt

IDS = prompts.IdRange.for_vocab(151936)  # Qwen3's


def record(sent: float, first: float, done: float, tokens: int, **extra) -> RequestRecord:
    itl = [(done - first) / (tokens - 1)] * (tokens - 1)
    return RequestRecord(
        ok=True,
        sent_at=sent,
        first_at=first,
        done_at=done,
        completion_tokens=tokens,
        prompt_tokens=32,
        itl_s=itl,
        **extra,
    )


def test_percentile_interpolates_like_numpy():
    values = [1.0, 2.0, 3.0, 4.0]
    assert stats.percentile(values, 50) == 2.5
    assert stats.percentile(values, 99) == pytest.approx(3.97)
    assert stats.percentile([7.0], 99) == 7.0
    assert stats.percentile([], 50) is None


def test_a_level_counts_only_answered_requests_over_the_whole_wall_time():
    records = [
        record(0.0, 0.1, 1.1, 101, verify_ct=40),
        record(0.0, 0.2, 2.2, 101, verify_ct=30),
        RequestRecord(ok=False, sent_at=1.1, done_at=1.2, error="HTTP 503: busy"),
    ]
    row = stats.summarise(2, CONSOLE_ENGINE, records, started=0.0, ended=2.5)
    assert row.completed == 2 and row.failed == 1 and row.num_prompts == 3
    assert row.output_tok_s == pytest.approx(
        202 / 2.5
    )  # tokens / (first send .. last answer), like bench_serving
    assert row.per_request_tok_s == pytest.approx(statistics.median([100 / 1.0, 100 / 2.0]))
    assert row.ttft_p50_ms == pytest.approx(150) and row.ttft_p99_ms == pytest.approx(199)
    assert row.accept_len == pytest.approx(202 / 70) and row.accept_source == "meta_info"
    assert row.errors == ["HTTP 503: busy"] and row.input_tokens == 32


def decode_line(running: int, tok_s: float, accept: float | None = 3.1) -> str:
    return logfmt.decode_line(
        running_req=running,
        token=100,
        token_usage=0.1,
        accept_len=accept,
        accept_rate=0.7,
        cuda_graph=True,
        gen_throughput=tok_s,
        queue_req=0,
    )


def test_the_decode_window_keeps_the_full_batch_minus_its_idle_diluted_first_line():
    lines = [
        decode_line(1, 60.0),
        decode_line(1, 61.0),  # a warm-up request
        decode_line(4, 12.0),
        "not a log line",
        decode_line(4, 400.0),
        decode_line(4, 420.0, 3.3),
        decode_line(2, 230.0),  # the drain at the end
        logfmt.prefill_line(
            new_seq=1,
            new_token=9,
            cached_token=0,
            token_usage=0.0,
            running_req=0,
            queue_req=0,
            input_throughput=1.0,
        ),
    ]
    window = decode.summarise(lines)
    assert window.tok_s == pytest.approx(410.0) and window.lines == 2
    assert window.accept_len == pytest.approx(3.2) and window.running == 4
    assert decode.summarise([decode_line(1, 50.0)]).tok_s is None


def level(**changes) -> LevelResult:
    base = dict(
        concurrency=4,
        engine=CONSOLE_ENGINE,
        num_prompts=8,
        completed=8,
        failed=0,
        duration_s=10.0,
        output_tok_s=400.0,
        per_request_tok_s=100.0,
        ttft_p50_ms=90.0,
        ttft_p99_ms=120.0,
        itl_p50_ms=10.0,
        itl_p99_ms=20.0,
        accept_len=None,
    )
    return LevelResult(**{**base, **changes})


def test_server_side_numbers_are_attached_and_fill_a_missing_accept_length():
    window = decode.DecodeWindow(tok_s=410.0, accept_len=3.2, lines=12, running=4)
    row = with_server_side(level(), window, others=0)
    assert (
        row.server_tok_s == 410.0 and row.accept_len == 3.2 and row.accept_source == "decode lines"
    )
    kept = with_server_side(level(accept_len=3.0, accept_source="meta_info"), window, others=0)
    assert (
        kept.accept_len == 3.0 and kept.accept_source == "meta_info"
    )  # per-request meta_info wins
    host = with_server_side(
        level(engine="sglang.bench_serving", accept_len=2.0, accept_source="server_info"), window, 0
    )
    assert (
        host.accept_len == 3.2
    )  # bench_serving's is a recent server average; the level's own lines are exact
    busier = with_server_side(level(concurrency=1), window, others=0)
    assert busier.other_requests == 3  # the decode lines ran 4 for a level of 1


def test_warnings_say_when_the_numbers_cannot_be_trusted():
    assert level_warnings(level(server_tok_s=410.0), max_running=64) == []
    apart = level_warnings(level(server_tok_s=480.0), max_running=None)
    assert len(apart) == 1 and "apart" in apart[0] and "480.0" in apart[0]
    busy = level_warnings(level(server_tok_s=600.0, other_requests=2), max_running=None)
    assert len(busy) == 1 and "also serving 2 other request(s)" in busy[0], busy
    assert "decode lines say 600.0 tok/s" in busy[0] and "keep up" not in busy[0]
    assert not any("--" in note for note in apart + busy)  # `b` shows them: no CLI flags
    capped = level_warnings(
        level(concurrency=16, failed=1, errors=["HTTP 503: busy"]), max_running=4
    )
    assert any("1 of 8 requests failed: HTTP 503: busy" in w for w in capped)
    assert any("above the server's max_running_requests 4" in w for w in capped)


def test_prompts_are_fixed_by_the_seed_and_exactly_as_long_as_asked():
    settings = SweepSettings(input_len=48, output_len=96, seed=7)
    first, again = prompts.bodies(settings, 4, 3, IDS), prompts.bodies(settings, 4, 3, IDS)
    assert first == again and len(first) == 3
    assert all(len(b["input_ids"]) == 48 and min(b["input_ids"]) >= prompts.LOW_ID for b in first)
    assert first[0]["sampling_params"] == {
        "max_new_tokens": 96,
        "temperature": 0.0,
        "ignore_eos": True,
    }
    assert prompts.bodies(SweepSettings(seed=8), 4, 1, IDS) != prompts.bodies(
        SweepSettings(seed=7), 4, 1, IDS
    )
    assert (
        prompts.warmup_bodies(settings, 1, IDS)[0]["sampling_params"]["max_new_tokens"]
        == prompts.WARMUP_TOKENS
    )


def test_levels_get_enough_prompts_to_reach_their_concurrency():
    assert SweepSettings().prompts_for(1) == 8 and SweepSettings().prompts_for(32) == 128
    assert SweepSettings(num_prompts=4).prompts_for(16) == 16


def test_the_chart_bar_scales_to_the_best_level():
    assert bar(100.0, 100.0, width=10) == "█" * 10
    assert bar(50.0, 100.0, width=10) == "█" * 5
    assert bar(0.0, 0.0) == ""
