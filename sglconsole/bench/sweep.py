"""run_sweep: benchmark a running server at several concurrency levels.

For each level: note the log position, let the engine send the level's
requests, then read the server's decode lines written meanwhile. They are
the cross-check that the load generator was not the bottleneck (its tok/s
and the server's agree) and a second source for the accept length.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sglconsole.actions.base import ActionContext
from sglconsole.actions.probe import concurrency as running_requests
from sglconsole.bench import decode, engines, provenance
from sglconsole.bench.model import (
    CONSOLE_ENGINE,
    LevelResult,
    ProgressCallback,
    SweepProgress,
    SweepResult,
    SweepSettings,
    no_progress,
)
from sglconsole.errors import UsageError
from sglconsole.remote.endpoint import Endpoint, forward_text

AGREEMENT = 0.05


async def run_sweep(
    ctx: ActionContext,
    host: str,
    port: int,
    levels: tuple[int, ...] | list[int] | None = None,
    *,
    settings: SweepSettings | None = None,
    profile: str | None = None,
    progress: ProgressCallback = no_progress,
) -> SweepResult:
    """Sweep HOST:PORT at each concurrency in `levels`; stages go to ctx.progress, request
    counts to `progress`."""
    settings = replace(settings or SweepSettings(), **({"levels": tuple(levels)} if levels else {}))
    check_levels(settings.levels)
    server = ctx.config.server(host, port)
    ssh = ctx.ssh[host]
    progress(
        SweepProgress(
            "prepare",
            0,
            len(settings.levels),
            None,
            profile=profile,
            message=f"inspect {host}:{port}",
        )
    )
    async with ctx.stage("inspect", f"what runs on {host}:{port}") as stage:
        facts = await provenance.inspect_server(ctx, host, port)
        gpus = f"{len(facts.gpus)}x {facts.gpu_model or 'GPU'}"
        stage.detail = f"pid {facts.pid}, SGLang {facts.version or '?'}, {gpus}"
    async with ctx.stage("forward", forward_text(host, server.http_address, port)) as stage:
        base = await ssh.forward(port, server.http_address)
        stage.detail = str(base)
    async with ctx.stage(
        "engine", "the host's sglang.bench_serving, or the console's generator"
    ) as stage:
        engine = await engines.choose(ssh, facts, port, base, settings)
        on_host = engine.name != CONSOLE_ENGINE
        stage.detail = (
            f"on the host: python -m {engine.name}"
            if on_host
            else "console generator through the SSH forward"
        )
    run = _Run(ctx, host, facts, base, engine, settings, profile, progress)
    result = SweepResult(
        provenance.make(
            host,
            port,
            facts,
            settings,
            engine.name,
            profile or server.profile,
            prompts=engine.prompts,
        ),
        [],
        gpu_mem_mib=facts.gpu_mem_mib,
    )
    try:
        for index, concurrency in enumerate(settings.levels):
            row = await run.level(index, concurrency)
            result.levels.append(row)
            result.warnings.extend(level_warnings(row, facts.max_running))
    finally:
        await engine.close()
    progress(
        SweepProgress(
            "done",
            len(settings.levels),
            len(settings.levels),
            None,
            engine=engine.name,
            profile=profile,
        )
    )
    return result


def check_levels(levels: tuple[int, ...]) -> None:
    if not levels or any(not isinstance(level, int) or level < 1 for level in levels):
        raise UsageError(f"concurrency levels must be positive integers, got {list(levels)}")


@dataclass
class _Run:
    """One sweep in progress: what every level needs."""

    ctx: ActionContext
    host: str
    facts: provenance.ServerFacts
    base: Endpoint
    engine: engines.HostEngine | engines.ConsoleEngine
    settings: SweepSettings
    profile: str | None
    progress: ProgressCallback

    def report(
        self, index: int, concurrency: int, done: int, total: int, row: LevelResult | None = None
    ) -> None:
        self.progress(
            SweepProgress(
                "level",
                index,
                len(self.settings.levels),
                concurrency,
                done,
                total,
                self.engine.name,
                self.profile,
                result=row,
            )
        )

    async def level(self, index: int, concurrency: int) -> LevelResult:
        count = self.settings.prompts_for(concurrency)
        detail = f"{count} requests, {self.settings.input_len} in / {self.settings.output_len} out"
        async with self.ctx.stage(f"concurrency {concurrency}", detail) as stage:
            others = await running_requests(self.base)
            window, row = await self.watched(
                lambda: self.engine.level(
                    concurrency,
                    count,
                    lambda done, total: self.report(index, concurrency, done, total),
                )
            )
            row = with_server_side(row, window, others)
            stage.detail = describe(row)
        self.report(index, concurrency, count, count, row)
        return row

    async def watched(self, measure) -> tuple[decode.DecodeWindow, LevelResult]:
        """Run `measure()` and read the decode lines the server logged meanwhile."""
        ssh, python, log = (
            self.ctx.ssh[self.host],
            self.ctx.config.host(self.host).python,
            self.facts.log,
        )
        start = await decode.position(ssh, python, log)
        row = await measure()
        end = await decode.position(ssh, python, log)
        lines = await decode.read_between(ssh, python, log, start, end) if log else []
        return decode.summarise(lines), row


def with_server_side(row: LevelResult, window: decode.DecodeWindow, others: int) -> LevelResult:
    """Attach the decode lines' view; the accept length comes from them when the engine had none or
    when bench_serving's is only the server's recent average."""
    prefer_lines = row.engine != CONSOLE_ENGINE or row.accept_len is None
    use_lines = prefer_lines and window.accept_len is not None
    # /get_load is gone in 0.5.23 and samples one moment; the decode lines count every request
    counted = window.running - row.concurrency if window.running is not None else 0
    return replace(
        row,
        server_tok_s=window.tok_s,
        decode_lines=window.lines,
        other_requests=max(others, counted),
        accept_len=window.accept_len if use_lines else row.accept_len,
        accept_source="decode lines" if use_lines else row.accept_source,
    )


def describe(row: LevelResult) -> str:
    parts = [f"{row.output_tok_s:.1f} tok/s"]
    if row.per_request_tok_s:
        parts.append(f"{row.per_request_tok_s:.1f}/request")
    if row.ttft_p50_ms is not None:
        parts.append(f"TTFT p50 {row.ttft_p50_ms:.0f} ms")
    if row.accept_len:
        parts.append(f"accept {row.accept_len:.2f}")
    parts.append(f"{row.completed}/{row.num_prompts} ok")
    return ", ".join(parts)


def level_warnings(row: LevelResult, max_running: int | None) -> list[str]:
    label = f"concurrency {row.concurrency}"
    out = []
    if row.failed:
        errors = "; ".join(row.errors[:2])
        out.append(
            f"{label}: {row.failed} of {row.num_prompts} requests failed: {errors}".rstrip(": ")
        )
    # no CLI flag is named: the console's `b` shows these notes too
    if row.other_requests:
        said = f" say {row.server_tok_s:.1f} tok/s and" if row.server_tok_s else ""
        out.append(
            f"{label}: the server was also serving {row.other_requests} other request(s) of its "
            f"users; its decode lines{said} count them, so they differ from the "
            f"{row.output_tok_s:.1f} tok/s measured here, and its load slowed these requests"
        )
    elif (
        row.server_tok_s and abs(row.output_tok_s - row.server_tok_s) > AGREEMENT * row.server_tok_s
    ):
        out.append(
            f"{label}: measured {row.output_tok_s:.1f} tok/s but the server's decode lines say "
            f"{row.server_tok_s:.1f} ({abs(row.output_tok_s / row.server_tok_s - 1):.0%} apart): "
            "time to first token weighs on short runs (longer outputs or more requests lower its "
            "share); if it stays, the load generator could not keep up"
        )
    if max_running and row.concurrency > max_running:
        out.append(
            f"{label} is above the server's max_running_requests {max_running}: "
            "the rest wait in its queue"
        )
    return out
