"""--save-baseline: a sweep becomes the profile's `baseline` in hosts.yaml, with its provenance.

Only the `baseline:` entry of that profile is rewritten (yaml_edit keeps every
other byte and comment) and the whole file is validated before it is written.
SLOW then compares live tok/s with the level nearest to what runs.
"""

from __future__ import annotations

from pathlib import Path

from sglconsole import config
from sglconsole.bench.model import SweepResult
from sglconsole.config import Baseline
from sglconsole.config import edit as yaml_edit


def _round(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


def baseline_value(result: SweepResult, previous: Baseline | None = None) -> dict:
    """The mapping to store: the lowest level also fills the single-number fields probe and
    restore use."""
    levels = sorted(
        (lv for lv in result.levels if lv.completed and lv.output_tok_s > 0),
        key=lambda lv: lv.concurrency,
    )
    if not levels:
        raise ValueError("no level completed a request: nothing to save")
    first = levels[0]
    where = result.provenance
    value = {
        "gen_throughput": _round(first.output_tok_s),
        "accept_len": _round(first.accept_len, 2),
        "concurrency": first.concurrency,
        # the operator's own threshold stays; the default is not written out
        "slow_fraction": previous.slow_fraction
        if previous and "slow_fraction" in previous.model_fields_set
        else None,
        "levels": [_level(lv) for lv in levels],
        "measured_at": where.measured_at,
        "sglang_version": where.sglang_version,
        "gpu_model": where.gpu_model,
        "gpu_count": where.gpu_count,
        "input_len": where.input_len,
        "output_len": where.output_len,
    }
    return {k: v for k, v in value.items() if v is not None}


def _level(level) -> dict:
    out = {
        "concurrency": level.concurrency,
        "gen_throughput": _round(level.output_tok_s),
        "accept_len": _round(level.accept_len, 2),
        "ttft_p50_ms": _round(level.ttft_p50_ms),
    }
    return {k: v for k, v in out.items() if v is not None}


def save(path: Path, profile: str, result: SweepResult, previous: Baseline | None = None) -> dict:
    """Write the baseline into hosts.yaml (atomically, only if the file stays valid); returns
    what was written."""
    value = baseline_value(result, previous)
    yaml_edit.update_file(
        Path(path),
        ("profiles", profile),
        "baseline",
        value,
        lambda text: config.parse(text, str(path)),
    )
    return value
