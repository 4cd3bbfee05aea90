"""The console's quick bench (`b`): one sweep at 1, 4 and 16 concurrent requests, summed up as
text the progress panel shows. Registered with the actions (it lives above them)."""

from __future__ import annotations

from sglconsole.actions.base import ActionContext, ActionResult, Plan
from sglconsole.actions.registry import Action, register
from sglconsole.bench.model import SweepSettings
from sglconsole.bench.sweep import run_sweep

BENCH_LEVELS = (1, 4, 16)


async def quick_bench(
    ctx: ActionContext, host: str, port: int, plan: Plan | None = None
) -> ActionResult:
    """A quick sweep; the summary holds the table and a tok/s chart."""
    result = await run_sweep(
        ctx, host, port, list(BENCH_LEVELS), settings=SweepSettings(output_len=128)
    )
    return ctx.result("bench", f"{host}:{port}", True, sweep_summary(result), sweep=result)


def sweep_summary(result) -> str:
    """tok/s against concurrency, as text the progress panel shows."""
    top = max((level.output_tok_s or 0.0 for level in result.levels), default=0.0) or 1.0
    lines = ["tok/s by concurrency (aggregate · per request · TTFT p50 · accept len)"]
    for level in result.levels:
        tok_s = level.output_tok_s or 0.0
        bar = "█" * max(1, round(24 * tok_s / top))
        accept = f" · {level.accept_len:.2f}" if level.accept_len else ""
        ttft = f" · {level.ttft_p50_ms:.0f} ms" if level.ttft_p50_ms is not None else ""
        per = (
            f" · {level.per_request_tok_s:.1f}" if getattr(level, "per_request_tok_s", None) else ""
        )
        lines.append(f"{level.concurrency:>4}  {bar:<24} {tok_s:7.1f}{per}{ttft}{accept}")
    lines += [f"note: {warning}" for warning in getattr(result, "warnings", [])][:3]
    return "\n".join(lines)


BENCH = register(
    Action(
        "bench",
        "sweep a server at 1, 4 and 16 concurrent requests: tok/s, TTFT, accept length",
        quick_bench,
        doing="being benchmarked",
        key="b",
        command=False,  # `sglconsole bench` has its own subcommand, with its own flags
    )
)
