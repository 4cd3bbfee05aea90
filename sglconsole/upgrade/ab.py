"""The canary's A/B: the candidate benchmarked at the old profile's baseline concurrencies, each
level's SGLang gen throughput (its own decode lines, the quantity the baseline stores) compared
with the baseline's at the same concurrency: like with like, as `bench --save-baseline` stores
it (requests others send meanwhile are counted, and named in the line). Under the baseline's
slow_fraction at any level fails the canary; the sweep becomes the promoted profile's baseline."""

from __future__ import annotations

from dataclasses import dataclass

from sglconsole.actions.base import ActionContext
from sglconsole.bench.baseline import baseline_value, level_tok_s
from sglconsole.bench.model import SweepResult, SweepSettings
from sglconsole.bench.sweep import run_sweep
from sglconsole.config.schema import Baseline

CANARY = SweepSettings(input_len=128, output_len=64, num_prompts=4, warmup=1)
"""Short: the old server is down while the canary runs (4 requests a level, 64 tokens each)."""


@dataclass(frozen=True)
class Comparison:
    levels: tuple[int, ...]
    lines: tuple[str, ...]
    """'c=1: 41.2 tok/s vs baseline 40.0 (103%)' per level."""
    problems: tuple[str, ...]
    result: SweepResult

    def baseline(self, previous: Baseline | None) -> dict | None:
        try:
            return baseline_value(self.result, previous)
        except ValueError:
            return None


def levels_of(baseline: Baseline | None) -> dict[int, float | None]:
    """concurrency -> the baseline's gen throughput there (None: a level it does not state)."""
    if baseline is None:
        return {1: None}
    found = {level.concurrency: level.gen_throughput for level in baseline.levels}
    if baseline.concurrency or baseline.gen_throughput:
        found.setdefault(baseline.concurrency or 1, baseline.gen_throughput)
    return dict(sorted(found.items())) or {1: None}


async def compare(ctx: ActionContext, host: str, port: int, baseline: Baseline | None, name: str):
    wanted = levels_of(baseline)
    result = await run_sweep(ctx, host, port, tuple(wanted), settings=CANARY, profile=name)
    lines, problems = [], []
    fraction = baseline.slow_fraction if baseline else 0.0
    for concurrency, expected in wanted.items():
        row = result.level(concurrency)
        measured = level_tok_s(row) if row else None
        if measured is None:
            problems.append(f"c={concurrency}: no gen throughput measured (unknown, not zero)")
            continue
        level = f"c={concurrency}" + (
            f" (+{row.other_requests} other)" if row.other_requests else ""
        )
        if expected is None:
            lines.append(f"{level}: {measured:.1f} tok/s (no baseline at this level)")
            continue
        share = measured / expected
        lines.append(f"{level}: {measured:.1f} tok/s vs baseline {expected:g} ({share:.0%})")
        if share < fraction:
            problems.append(
                f"c={concurrency}: {measured:.1f} tok/s is under {fraction:.0%} of the baseline's"
                f" {expected:g}"
            )
    return Comparison(tuple(wanted), tuple(lines), tuple(problems), result)
