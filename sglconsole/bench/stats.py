"""Turn per-request records into one row of the sweep (pure)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from sglconsole.bench.model import LevelResult, RequestRecord

MAX_ERRORS = 5


def percentile(values: Sequence[float], percent: float) -> float | None:
    """Linear interpolation between closest ranks (numpy's default), so numbers match
    bench_serving's."""
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * percent / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _ms(value: float | None) -> float | None:
    return None if value is None else value * 1000


def accept_length(records: Sequence[RequestRecord]) -> float | None:
    """Tokens per verification over all requests (SGLang's definition), else the mean per
    request."""
    verified = [record for record in records if record.verify_ct]
    if verified:
        return sum(record.completion_tokens for record in verified) / sum(
            record.verify_ct for record in verified
        )
    lengths = [record.accept_len for record in records if record.accept_len]
    return statistics.fmean(lengths) if lengths else None


def summarise(
    concurrency: int, engine: str, records: Sequence[RequestRecord], started: float, ended: float
) -> LevelResult:
    succeeded = [record for record in records if record.ok]
    duration = max(ended - started, 1e-9)
    output = sum(record.completion_tokens for record in succeeded)
    ttfts = [record.ttft_s for record in succeeded if record.ttft_s is not None]
    itls = [gap for record in succeeded for gap in record.itl_s]
    speeds = [speed for speed in (record.decode_tok_s for record in succeeded) if speed is not None]
    accept = accept_length(succeeded)
    return LevelResult(
        concurrency=concurrency,
        engine=engine,
        num_prompts=len(records),
        completed=len(succeeded),
        failed=len(records) - len(succeeded),
        duration_s=duration,
        output_tok_s=output / duration,
        per_request_tok_s=statistics.median(speeds) if speeds else None,
        ttft_p50_ms=_ms(percentile(ttfts, 50)),
        ttft_p99_ms=_ms(percentile(ttfts, 99)),
        itl_p50_ms=_ms(percentile(itls, 50)),
        itl_p99_ms=_ms(percentile(itls, 99)),
        accept_len=accept,
        accept_source="meta_info" if accept is not None else None,
        input_tokens=statistics.fmean(record.prompt_tokens for record in succeeded)
        if succeeded
        else None,
        output_tokens=output,
        errors=list(dict.fromkeys(record.error for record in records if not record.ok))[
            :MAX_ERRORS
        ],
    )
