"""The console's quick bench (`b`): one sweep at 1, 4 and 16 concurrent requests, summed up as
text the progress panel shows. Its record joins the actions' in sglconsole.catalog (it lives
above them).

It loads a live server its users share, so it asks first, like the actions that change one."""

from __future__ import annotations

import math

from sglconsole.actions.base import ActionContext, ActionResult, Plan
from sglconsole.actions.registry import MANAGED, RUNNING, Action
from sglconsole.actions.restore import decode_stats
from sglconsole.bench.model import SweepSettings
from sglconsole.bench.sweep import run_sweep
from sglconsole.remote.inspect import snapshot

BENCH_LEVELS = (1, 4, 16)
QUICK = SweepSettings(levels=BENCH_LEVELS, output_len=128)


async def plan_bench(ctx: ActionContext, host: str, port: int) -> Plan:
    """What the sweep sends, and about how long the server's users share it with the sweep."""
    target = f"{host}:{port}"
    levels = ", ".join(str(concurrency) for concurrency in BENCH_LEVELS)
    requests = ", ".join(str(QUICK.prompts_for(concurrency)) for concurrency in BENCH_LEVELS)
    return Plan(
        "bench",
        target,
        [
            f"load {target} at {levels} concurrent requests, one level after another",
            f"{requests} requests per level (+{QUICK.warmup} warm-up each),"
            f" {QUICK.input_len} tokens in, {QUICK.output_len} out",
            await _duration(ctx, host, port),
            "its users share the server meanwhile: their requests may be slower",
        ],
    )


async def _duration(ctx: ActionContext, host: str, port: int) -> str:
    """An estimate from the server's own decode lines (per request tok/s), when it has some."""
    rounds = sum(
        math.ceil(QUICK.prompts_for(concurrency) / concurrency) + QUICK.warmup
        for concurrency in BENCH_LEVELS
    )  # each round: every slot generates output_len tokens
    try:
        speed = await _per_request_tok_s(ctx, host, port)
    except Exception:  # an estimate only: never a reason not to ask
        speed = None
    if not speed:
        return (
            f"duration: {rounds} rounds of {QUICK.output_len} tokens each (about a minute or more)"
        )
    seconds = rounds * QUICK.output_len / speed
    return (
        f"duration: about {_seconds(seconds)} ({rounds} rounds of {QUICK.output_len} tokens"
        f" at its {speed:.1f} tok/s per request now; slower under more load)"
    )


async def _per_request_tok_s(ctx: ActionContext, host: str, port: int) -> float | None:
    """The server's median tok/s per request from its log's last busy decode lines."""
    server = ctx.config.find_server(host, port)
    process = (await snapshot(ctx.ssh[host], ctx.config.host(host).python)).server(port)
    if process is None:
        return None
    log = (server.log if server is not None else None) or process.main.stdout
    if not log:
        return None
    main = process.main
    return (await decode_stats(ctx.ssh[host], log, main.pid, main.start)).per_request


def _seconds(value: float) -> str:
    return f"{value:.0f} s" if value < 120 else f"{value / 60:.0f} min"


async def quick_bench(
    ctx: ActionContext, host: str, port: int, plan: Plan | None = None
) -> ActionResult:
    """A quick sweep; the summary holds the table and a tok/s chart."""
    result = await run_sweep(ctx, host, port, list(BENCH_LEVELS), settings=QUICK)
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


BENCH = Action(
    name="bench",
    help="sweep a server at 1, 4 and 16 concurrent requests: tok/s, TTFT, accept length",
    label="Bench",
    tip="sweep the server at 1, 4 and 16 concurrent requests: tok/s, TTFT, accept length",
    run=quick_bench,
    plan=plan_bench,
    confirm=True,
    doing="being benchmarked",
    key="b",
    needs=(MANAGED, RUNNING),
    command=False,  # `sglconsole bench` has its own subcommand, with its own flags
)
"""Declared here, beside its runner; sglconsole.catalog puts it in the registry."""
