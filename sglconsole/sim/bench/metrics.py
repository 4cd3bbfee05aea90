"""bench_serving's arithmetic, done the simulator's own way (numpy's defaults, without numpy).

One finished request is (succeeded, prompt_len, output_len, ttft_s, itls_s, latency_s). The
result keys and units follow SGLang's bench_serving (ms, tok/s, req/s).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field


@dataclass
class Outcome:
    succeeded: bool
    prompt_len: int = 0
    output_len: int = 0
    ttft: float = 0.0  # s
    latency: float = 0.0  # s, request sent -> last chunk
    itl: list[float] = field(default_factory=list)  # s, between chunks
    started: float = 0.0  # perf_counter at send
    error: str = ""


def percentile(values: list[float], percent: float) -> float:
    """Linear interpolation between closest ranks, as numpy.percentile does by default."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = (len(ordered) - 1) * percent / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _spread(prefix: str, values_s: list[float]) -> dict[str, float]:
    values_ms = [seconds * 1000 for seconds in values_s] or [0.0]
    return {
        f"mean_{prefix}_ms": statistics.fmean(values_ms),
        f"median_{prefix}_ms": percentile(values_ms, 50),
        f"std_{prefix}_ms": statistics.pstdev(values_ms),
        f"p90_{prefix}_ms": percentile(values_ms, 90),
        f"p95_{prefix}_ms": percentile(values_ms, 95),
        f"p99_{prefix}_ms": percentile(values_ms, 99),
    }


def _peak_output_rate(done: list[Outcome]) -> tuple[float, int]:
    """Most tokens finished in any one-second bucket, and most requests in flight at once."""
    if not done:
        return 0.0, 0
    origin = min(outcome.started for outcome in done)
    buckets: dict[int, int] = {}
    for outcome in done:
        offset = outcome.started + outcome.ttft - origin
        buckets[int(offset)] = buckets.get(int(offset), 0) + 1
        for gap in outcome.itl:
            offset += gap
            buckets[int(offset)] = buckets.get(int(offset), 0) + 1
    edges = sorted(
        [(outcome.started, 1) for outcome in done]
        + [(outcome.started + outcome.latency, -1) for outcome in done]
    )
    live = peak = 0
    for _, step in edges:
        live += step
        peak = max(peak, live)
    return float(max(buckets.values())), peak


def metrics(outcomes: list[Outcome], duration: float) -> dict[str, float | int]:
    done = [outcome for outcome in outcomes if outcome.succeeded]
    total_in = sum(outcome.prompt_len for outcome in done)
    total_out = sum(outcome.output_len for outcome in done)
    tpots = [
        (outcome.latency - outcome.ttft) / (outcome.output_len - 1)
        for outcome in done
        if outcome.output_len > 1
    ]
    peak_tokens, peak_requests = _peak_output_rate(done)
    duration = max(duration, 1e-9)
    return {
        "completed": len(done),
        "total_input_tokens": total_in,
        "total_input_text_tokens": total_in,
        "total_input_vision_tokens": 0,
        "total_output_tokens": total_out,
        "total_output_tokens_retokenized": total_out,
        "request_throughput": len(done) / duration,
        "input_throughput": total_in / duration,
        "output_throughput": total_out / duration,
        "total_throughput": (total_in + total_out) / duration,
        **_spread("e2e_latency", [outcome.latency for outcome in done]),
        **_spread("ttft", [outcome.ttft for outcome in done]),
        **_spread("tpot", tpots),
        **_spread("itl", [gap for outcome in done for gap in outcome.itl]),
        "concurrency": sum(outcome.latency for outcome in done) / duration,
        "max_output_tokens_per_s": peak_tokens,
        "max_concurrent_requests": peak_requests,
    }
