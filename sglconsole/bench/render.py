"""Rich tables for a sweep and for a comparison (pure: renderables in, nothing printed)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from sglconsole.bench.compare import CompareResult
from sglconsole.bench.model import LevelResult, SweepResult
from sglconsole.core import drift
from sglconsole.core.text import safe

BAR_WIDTH = 20


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def bar(value: float, top: float, width: int = BAR_WIDTH) -> str:
    """tok/s against concurrency, drawn in the table: a terminal chart needs no plotting library."""
    if top <= 0:
        return ""
    eighths = round(value / top * width * 8)
    return "█" * (eighths // 8) + ("", "▏", "▎", "▍", "▌", "▋", "▊", "▉")[eighths % 8]


def title(result: SweepResult) -> str:
    where = result.provenance
    gpus = f"{where.gpu_count}x {where.gpu_model}" if where.gpu_model else "GPUs unknown"
    return (
        f"{where.host}:{where.port}  profile {where.profile or '?'}  "
        f"SGLang {where.sglang_version or '?'}  {gpus}  "
        f"{where.input_len} in / {where.output_len} out  engine {where.engine}  {where.measured_at}"
    )


def sweep_table(result: SweepResult) -> Table:
    table = Table(title=safe(title(result), "bold"), title_justify="left")
    for name in (
        "conc.",
        "tok/s",
        "tok/s/req",
        "TTFT p50",
        "TTFT p99",
        "ITL p50",
        "ITL p99",
        "accept",
        "ok",
        "failed",
        "server tok/s",
    ):
        table.add_column(name, justify="right")
    table.add_column("tok/s by concurrency", min_width=BAR_WIDTH + 1, no_wrap=True)
    top = max((level.output_tok_s for level in result.levels), default=0)
    for level in result.levels:
        table.add_row(
            str(level.concurrency),
            _num(level.output_tok_s),
            _num(level.per_request_tok_s),
            _ms(level.ttft_p50_ms),
            _ms(level.ttft_p99_ms),
            _ms(level.itl_p50_ms),
            _ms(level.itl_p99_ms),
            _num(level.accept_len, 2),
            str(level.completed),
            Text(str(level.failed), style="bold red" if level.failed else ""),
            _num(level.server_tok_s),
            Text(bar(level.output_tok_s, top), style="cyan"),
        )
    return table


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f} ms"


def differences_table(result: CompareResult) -> Table | None:
    rows = [
        (name, row) for name, report in result.differences.items() for row in report.differences
    ]
    if not rows:
        return None
    first = result.profiles[0]
    table = Table(title=safe(f"what differs from {first}", "bold"), title_justify="left")
    for column in ("flag / env", first, "profile", "value", "state"):
        table.add_column(column, overflow="fold")
    for name, row in rows:
        flag = Text(row.flag, style="bold" if row.performance else "")
        table.add_row(
            flag,
            _cell(row.shown(row.profile)),
            name,
            _cell(row.shown(row.running)),
            Text(
                state_label(row.state, first, name),
                style="red" if row.state == drift.State.DIFFERENT else "yellow",
            ),
        )
    return table


def state_label(state: drift.State, first: str, other: str) -> str:
    """Drift's words are about a profile and a running server; here both sides are profiles."""
    return {
        drift.State.DIFFERENT: "different",
        drift.State.ONLY_PROFILE: f"only set in {first}",
        drift.State.ONLY_RUNNING: f"only set in {other}",
        drift.State.DEFAULTED_DIFFERENTLY: "defaults differ",
    }.get(state, state.value)


def _cell(value: object) -> Text:
    return safe("unset" if value is None else value, "dim" if value is None else "")


def numbers_table(result: CompareResult) -> Table:
    runs = result.runs
    table = Table(
        title=safe(f"{result.target}: each profile measured in turn", "bold"), title_justify="left"
    )
    table.add_column("")
    for run in runs:
        table.add_column(run.profile, justify="right")
    if len(runs) > 1:
        table.add_column(f"vs {runs[0].profile}", justify="right")
    for label, pick in _metrics(result):
        values = [pick(run) for run in runs]
        cells = [
            _num(value, 2 if "accept" in label else 0 if "ms" in label else 1) for value in values
        ]
        if len(runs) > 1:
            cells.append(_ratios(values))
        table.add_row(label, *cells)
    table.add_row(
        "GPU memory used (MiB)", *[_memory(run) for run in runs], *([""] if len(runs) > 1 else [])
    )
    for run in runs:
        if run.error:
            table.add_row(
                Text(f"{run.profile}: failed", style="bold red"), *[""] * (len(table.columns) - 1)
            )
    return table


def _metrics(result: CompareResult):
    levels = sorted(
        {level.concurrency for run in result.runs if run.sweep for level in run.sweep.levels}
    )

    def metric_at(concurrency: int, attribute: str):
        def pick(run) -> float | None:
            level: LevelResult | None = run.sweep.level(concurrency) if run.sweep else None
            return getattr(level, attribute) if level else None

        return pick

    rows = [(f"tok/s @{level}", metric_at(level, "output_tok_s")) for level in levels]
    rows += [(f"accept length @{level}", metric_at(level, "accept_len")) for level in levels[:1]]
    rows += [(f"TTFT p50 ms @{level}", metric_at(level, "ttft_p50_ms")) for level in levels]
    return rows


def _ratios(values: list[float | None]) -> str:
    first = values[0]
    if not first:
        return ""
    return " ".join("-" if value is None else f"{value / first:.2f}x" for value in values[1:])


def _memory(run) -> str:
    memory = run.sweep.gpu_mem_mib if run.sweep else []
    return " / ".join(f"{mib:,}" for mib in memory) or "-"
