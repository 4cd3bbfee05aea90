"""--save-baseline: a sweep becomes the profile's `baseline` in hosts.yaml, with its provenance.

Only the `baseline:` entry of that profile is rewritten (yaml_edit keeps every
other byte and comment) and the whole file is validated before it is written.
SLOW then compares live tok/s with the level nearest to what runs.

What is stored is what SLOW, probe, restore and capture compare: SGLang's own decode gen
throughput (core.decode_lines.decode_speed), here the server's decode lines during each level
(`LevelResult.server_tok_s`), never the load generator's tok/s, which counts time to first token
and the batch filling and draining (`level_tok_s` is the one place that picks it).
"""

from __future__ import annotations

from pathlib import Path

from sglconsole import config
from sglconsole.bench.model import LevelResult, SweepResult
from sglconsole.config import Baseline
from sglconsole.config import edit as yaml_edit


def _round(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)


def level_tok_s(level: LevelResult) -> float | None:
    """A level's `gen_throughput` in hosts.yaml: SGLang's decode gen throughput during the level,
    in all, at its concurrency (the server's decode lines); None when they could not be read (a
    level's client tok/s is another quantity and never stands in for it)."""
    return level.server_tok_s if level.server_tok_s and level.server_tok_s > 0 else None


def unmeasured(result: SweepResult) -> list[int]:
    """The concurrencies that completed requests but have no server-side speed to store."""
    return [
        level.concurrency
        for level in result.levels
        if level.completed and level_tok_s(level) is None
    ]


def baseline_value(result: SweepResult, previous: Baseline | None = None) -> dict:
    """The mapping to store: the lowest level also fills the single-number fields probe and
    restore use. Levels without the server's own speed are left out (`unmeasured`)."""
    levels = sorted(
        (level for level in result.levels if level.completed and level_tok_s(level) is not None),
        key=lambda level: level.concurrency,
    )
    if not levels:
        done = any(level.completed for level in result.levels)
        raise ValueError(
            "the server's decode lines could not be read during any level (its log): a baseline "
            "is SGLang's own decode gen throughput, nothing to save"
            if done
            else "no level completed a request: nothing to save"
        )
    first = levels[0]
    where = result.provenance
    value = {
        "gen_throughput": _round(level_tok_s(first)),
        "accept_len": _round(first.accept_len, 2),
        "concurrency": first.concurrency,
        # the operator's own threshold stays; the default is not written out
        "slow_fraction": previous.slow_fraction
        if previous and "slow_fraction" in previous.model_fields_set
        else None,
        "levels": [_level(level) for level in levels],
        "measured_at": where.measured_at,
        "sglang_version": where.sglang_version,
        "gpu_model": where.gpu_model,
        "gpu_count": where.gpu_count,
        "input_len": where.input_len,
        "output_len": where.output_len,
    }
    return {key: item for key, item in value.items() if item is not None}


def _level(level: LevelResult) -> dict:
    out = {
        "concurrency": level.concurrency,
        "gen_throughput": _round(level_tok_s(level)),
        "accept_len": _round(level.accept_len, 2),
        "ttft_p50_ms": _round(level.ttft_p50_ms),
    }
    return {key: item for key, item in out.items() if item is not None}


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
