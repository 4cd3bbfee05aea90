"""The header of a server's detail view: who it is, how it is doing, and why."""

from __future__ import annotations

from rich.text import Text

from sglconsole.core.containers import describe
from sglconsole.core.probe_result import ProbeResult
from sglconsole.core.text import clean, fmt_duration, fmt_num
from sglconsole.state.fleet import ServerState, Status
from sglconsole.state.status import baseline_for
from sglconsole.tui.paint.canary import canary_lines
from sglconsole.tui.paint.labels import target, tok_s, uptime, why
from sglconsole.tui.paint.palette import Palette
from sglconsole.tui.paint.router import route_lines
from sglconsole.tui.paint.spark import sparkline

SPARK_WIDTH = 16


def header(server: ServerState, palette: Palette, now: float) -> Text:
    lines = [identity(server, palette), vitals(server, palette, now)]
    if server.container is not None and server.process is not None:
        where = describe(server.container, server.container_version)
        lines.append(Text(f"in {clean(where)}", style=palette.muted))
    if server.status != Status.UP and server.reason:
        lines.append(Text.assemble(("why: ", "bold"), (why(server), palette.warn)))
    lines += route_lines(server, palette, now)
    if server.action:
        lines.append(Text(f"now: {clean(server.action)}", style=palette.accent))
    if server.probe is not None:
        lines.append(probe_line(server.probe, palette, now))
    lines += canary_lines(server, palette, now)
    return Text("\n").join(lines)


def identity(server: ServerState, palette: Palette) -> Text:
    text = Text.assemble((target(server), "bold"), " ")
    text.append_text(palette.badge(server.status))
    text.append(
        " " + (clean(server.profile_name) if server.profile_name else "(not in hosts.yaml)"),
        style="bold",
    )
    if server.version:
        text.append(f"  sglang {clean(server.version)}", style=palette.muted)
    return text


def vitals(server: ServerState, palette: Palette, now: float) -> Text:
    view = server.view
    # numbers with no pid: read from Prometheus (SGLang's series or the exporter's)
    measured = view.tok_s is not None or view.load is not None or view.started is not None
    if (
        view.pid is None and server.process is not None and not measured
    ):  # unreachable: what we last saw is not now
        return Text(
            f"pid {server.process.main.pid} when last seen · no numbers while "
            f"{server.view.status.value}",
            style=palette.muted,
        )
    if view.pid is None and not measured:
        gpus = (
            ",".join(map(str, server.config.gpus)) if server.config and server.config.gpus else "-"
        )
        return Text(
            f"not running · GPUs {gpus} · log {clean(server.log_path or '-')}", style=palette.muted
        )
    load = view.load
    who = f"pid {view.pid}" if view.pid is not None else "no pid (Prometheus)"
    text = Text(f"{who} · up {uptime(view.uptime(now))} · ")
    text.append(f"{tok_s(view.tok_s)} tok/s", style="bold")
    running = (load.running_req if load else None) or 1
    baseline = baseline_for(server.profile, running) if server.profile else None
    spark = sparkline(list(view.throughput), SPARK_WIDTH, top=baseline)
    if spark:
        text.append(f" {spark}", style=palette.accent)
    text.append(f" · accept {fmt_num(load.accept_len if load else None, 2)}")
    if load is not None:
        text.append(f" · run {load.running_req or 0} queue {load.queue_req or 0}")
        text.append(f" · tokens {fmt_num((load.token_usage or 0) * 100, 0, '%')}")
        if load.source in ("metrics", "prometheus"):
            where = "/metrics" if load.source == "metrics" else "Prometheus"
            text.append(f" (from {where})", style=palette.muted)
    return text


def probe_line(probe: ProbeResult, palette: Palette, now: float) -> Text:
    style = palette.good if probe.verdict == "OK" else palette.bad
    text = Text.assemble(("probe ", "bold"), (probe.verdict, style))
    text.append(f": {clean(probe.reason)}")
    if probe.time:
        text.append(f" ({fmt_duration(now - probe.time)} ago)", style=palette.muted)
    return text
