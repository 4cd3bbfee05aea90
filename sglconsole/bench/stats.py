"""Turn per-request records into one row of the sweep (pure)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from sglconsole.bench.model import LevelResult, RequestRecord

MAX_ERRORS = 5


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear interpolation between closest ranks (numpy's default), so numbers match
    bench_serving's."""
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _ms(value: float | None) -> float | None:
    return None if value is None else value * 1000


def accept_length(records: Sequence[RequestRecord]) -> float | None:
    """Tokens per verification over all requests (SGLang's definition), else the mean per
    request."""
    verified = [r for r in records if r.verify_ct]
    if verified:
        return sum(r.completion_tokens for r in verified) / sum(r.verify_ct for r in verified)
    lengths = [r.accept_len for r in records if r.accept_len]
    return statistics.fmean(lengths) if lengths else None


def summarise(
    concurrency: int, engine: str, records: Sequence[RequestRecord], started: float, ended: float
) -> LevelResult:
    ok = [r for r in records if r.ok]
    duration = max(ended - started, 1e-9)
    output = sum(r.completion_tokens for r in ok)
    ttfts = [r.ttft_s for r in ok if r.ttft_s is not None]
    itls = [gap for r in ok for gap in r.itl_s]
    speeds = [s for s in (r.decode_tok_s for r in ok) if s is not None]
    accept = accept_length(ok)
    return LevelResult(
        concurrency=concurrency,
        engine=engine,
        num_prompts=len(records),
        completed=len(ok),
        failed=len(records) - len(ok),
        duration_s=duration,
        output_tok_s=output / duration,
        per_request_tok_s=statistics.median(speeds) if speeds else None,
        ttft_p50_ms=_ms(percentile(ttfts, 50)),
        ttft_p99_ms=_ms(percentile(ttfts, 99)),
        itl_p50_ms=_ms(percentile(itls, 50)),
        itl_p99_ms=_ms(percentile(itls, 99)),
        accept_len=accept,
        accept_source="meta_info" if accept is not None else None,
        input_tokens=statistics.fmean(r.prompt_tokens for r in ok) if ok else None,
        output_tokens=output,
        errors=list(dict.fromkeys(r.error for r in records if not r.ok))[:MAX_ERRORS],
    )
