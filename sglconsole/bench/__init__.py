"""Profile benchmarking: sweep a server over concurrency levels, compare profiles, keep baselines.

For a UI (all async, over an ActionContext whose `progress` receives the stages):

    # on_progress gets a SweepProgress per finished request and per level
    result = await run_sweep(ctx, host, port, [1, 8, 32], settings=SweepSettings(output_len=256),
                             progress=on_progress)
    compared = await run_compare(ctx, host, port, ["drifted", "proven"], settings=...,
                                 progress=on_progress)
    save_baseline(ctx.config.path, "proven", result, ctx.config.profiles["proven"].baseline)
"""

from sglconsole.bench.baseline import save as save_baseline
from sglconsole.bench.compare import CompareResult, ProfileRun, run_compare
from sglconsole.bench.model import (
    LevelResult,
    Provenance,
    RequestRecord,
    SweepProgress,
    SweepResult,
    SweepSettings,
)
from sglconsole.bench.sweep import run_sweep

__all__ = [
    "CompareResult",
    "LevelResult",
    "ProfileRun",
    "Provenance",
    "RequestRecord",
    "SweepProgress",
    "SweepResult",
    "SweepSettings",
    "run_compare",
    "run_sweep",
    "save_baseline",
]
