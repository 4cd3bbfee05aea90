"""bench: sweep a running server over concurrency levels, or compare profiles on it.

Exit 0 when every level completed without failed requests (and, for
--compare, the original server is back), 1 when something failed, 2 when
the command was refused (bad arguments, a drifted server for --save-baseline).
"""

from __future__ import annotations

import argparse
import shlex

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from sglconsole import config
from sglconsole.actions.base import ActionContext, Plan, Stage, StageFailed, StageState
from sglconsole.bench import baseline, render
from sglconsole.bench.compare import CompareResult, run_compare
from sglconsole.bench.model import (
    DEFAULT_LEVELS,
    ENGINES,
    SweepProgress,
    SweepResult,
    SweepSettings,
)
from sglconsole.bench.sweep import run_sweep
from sglconsole.commands.actions import STATE_STYLE, confirm, target
from sglconsole.commands.output import print_json
from sglconsole.commands.registry import command, config_path, run_async, stderr, stdout
from sglconsole.core.text import safe
from sglconsole.errors import UsageError
from sglconsole.remote.inspect import snapshot
from sglconsole.remote.ssh.connection import SshFleet


def levels_arg(text: str) -> tuple[int, ...]:
    try:
        levels = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected numbers separated by commas, e.g. 1,8,32, got {text!r}"
        ) from None
    if not levels or min(levels) < 1:
        raise argparse.ArgumentTypeError(f"concurrency levels must be positive, got {text!r}")
    return levels


@command(
    "bench", "benchmark a server at several concurrency levels; --compare profiles; --save-baseline"
)
def _bench(parser: argparse.ArgumentParser):
    parser.add_argument("target", metavar="HOST:PORT")
    parser.add_argument(
        "--concurrency", type=levels_arg, default=DEFAULT_LEVELS, metavar="1,8,32,128"
    )
    parser.add_argument(
        "--input-len",
        type=int,
        default=256,
        metavar="N",
        help="prompt tokens per request (default 256)",
    )
    parser.add_argument(
        "--output-len",
        type=int,
        default=256,
        metavar="N",
        help="generated tokens per request (default 256)",
    )
    parser.add_argument(
        "--num-prompts",
        type=int,
        metavar="N",
        help="requests per level (default 4 per concurrency slot, at least 8)",
    )
    parser.add_argument("--seed", type=int, default=1, help="fixes the prompts (default 1)")
    parser.add_argument(
        "--engine",
        choices=ENGINES,
        default="auto",
        help="host: the host's python -m sglang.bench_serving; console: sglconsole's generator; "
        "auto (default): host if it has one",
    )
    parser.add_argument(
        "--compare",
        nargs="+",
        metavar="PROFILE",
        help="relaunch with each profile in turn, sweep each, put back the original",
    )
    parser.add_argument(
        "--save-baseline",
        action="store_true",
        help="write the result into the profile's baseline in hosts.yaml",
    )
    parser.add_argument(
        "--yes", "-y", action="store_true", help="do not ask before --compare relaunches the server"
    )
    parser.add_argument(
        "--json", action="store_true", help="print the result as JSON (one row per level)"
    )

    def handle(args: argparse.Namespace) -> int:
        cfg = config.load(config_path(args))
        host, port = target(args, cfg)
        settings = _settings(args)
        if args.compare:
            return run_async(_compare(cfg, host, port, settings, args))
        return run_async(_sweep(cfg, host, port, settings, args))

    return handle


def _settings(args: argparse.Namespace) -> SweepSettings:
    for name in ("input_len", "output_len", "num_prompts"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise UsageError(f"--{name.replace('_', '-')} must be at least 1, got {value}")
    return SweepSettings(
        levels=args.concurrency,
        input_len=args.input_len,
        output_len=args.output_len,
        num_prompts=args.num_prompts,
        seed=args.seed,
        engine=args.engine,
    )


class Display:
    """Stage lines, and a progress bar under them while a level runs (only on a terminal;
    nothing with --json)."""

    def __init__(self, quiet: bool):
        self.quiet = quiet
        self.out = stdout()
        # one console for both, so the lines scroll above the live bar instead of tearing it
        self.bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.out,
            transient=True,
            disable=quiet or not self.out.is_terminal,
        )
        self.task = self.bar.add_task("starting", total=None)

    def stage(self, stage: Stage) -> None:
        if self.quiet or stage.state == StageState.RUNNING:
            return
        self.out.print(safe(stage.line(), STATE_STYLE[stage.state]))
        for line in stage.evidence[-10:] if stage.state == StageState.FAILED else []:
            self.out.print(safe("    " + line, "red"))

    def sweep(self, event: SweepProgress) -> None:
        if event.phase != "level":
            return
        who = f"{event.profile}: " if event.profile else ""
        what = f"{who}concurrency {event.concurrency} ({event.level_index + 1}/{event.level_count})"
        self.bar.update(
            self.task, description=what, total=event.total or None, completed=event.done
        )

    def __enter__(self) -> Display:
        self.bar.start()
        return self

    def __exit__(self, *exc) -> None:
        self.bar.stop()


async def _sweep(
    cfg: config.Config, host: str, port: int, settings: SweepSettings, args: argparse.Namespace
) -> int:
    fleet = SshFleet(cfg.hosts)
    with Display(args.json) as display:
        ctx = ActionContext(cfg, fleet, progress=display.stage)
        try:
            profile = await _profile_it_runs(ctx, host, port) if args.save_baseline else None
            result = await run_sweep(ctx, host, port, settings=settings, progress=display.sweep)
        except StageFailed as exc:
            return _failed(args, f"bench failed: {exc}")
        finally:
            await fleet.close()
    _print_sweep(result, args.json)
    saved = _save(cfg, profile, result, args.json) if args.save_baseline and result.levels else True
    return 0 if result.ok and saved else 1


async def _profile_it_runs(ctx: ActionContext, host: str, port: int) -> str:
    """--save-baseline: refuse (before the sweep) when the server does not run its profile's
    argv."""
    from sglconsole.remote.drift import diff_server

    name = ctx.config.server(host, port).profile
    async with ctx.stage("drift", f"does {host}:{port} run profile {name}?") as stage:
        report, _, _ = await diff_server(ctx.config, host, port, ctx.ssh[host])
        if report.differs:
            flags = ", ".join(difference.flag for difference in report.differences[:5])
            raise UsageError(
                f"{host}:{port} differs from profile {name} ({flags}): "
                "its numbers are not that profile's; "
                f"relaunch it first (sglconsole relaunch {host}:{port}) or bench --compare {name}"
            )
        stage.detail = f"runs profile {name} exactly"
    return name


def _failed(args: argparse.Namespace, message: str) -> int:
    if args.json:
        print_json({"ok": False, "error": message})
    else:
        stdout().print(safe(message, "bold red"))
    return 1


def _print_sweep(result: SweepResult, as_json: bool) -> None:
    if as_json:
        print_json(result.to_dict())
        return
    out = stdout()
    out.print(render.sweep_table(result))
    for warning in result.warnings:
        out.print(safe(f"warning: {warning}", "yellow"))


def _save(cfg: config.Config, profile: str, result: SweepResult, quiet: bool) -> bool:
    """Store the sweep as PROFILE's baseline; False (said on stderr) when nothing could be."""
    if cfg.path is None:
        raise UsageError("--save-baseline needs a hosts.yaml file")
    previous = cfg.profiles[profile].baseline
    try:
        written = baseline.save(cfg.path, profile, result, previous)
    except ValueError as exc:
        stderr().print(safe(f"baseline of profile {profile} not saved: {exc}", "bold red"))
        return False
    left_out = baseline.unmeasured(result)
    if left_out:
        stderr().print(
            safe(
                f"warning: concurrency {', '.join(map(str, left_out))} not saved: the server's "
                "decode lines during it could not be read (a baseline is SGLang's own speed)",
                "yellow",
            )
        )
    if not quiet:
        levels = ", ".join(
            f"{level['gen_throughput']:g} tok/s @{level['concurrency']}"
            for level in written["levels"]
        )
        stdout().print(
            safe(f"saved baseline of profile {profile} in {cfg.path}: {levels}", "bold green")
        )
    return True


async def _compare(
    cfg: config.Config, host: str, port: int, settings: SweepSettings, args: argparse.Namespace
) -> int:
    if args.json and not args.yes:
        raise UsageError("--compare relaunches the server: with --json, add --yes")
    fleet = SshFleet(cfg.hosts)
    try:
        with Display(args.json) as display:
            ctx = ActionContext(cfg, fleet, progress=display.stage)
            if not args.json and not confirm(
                await _compare_plan(ctx, host, port, args.compare, settings), args.yes
            ):
                stderr().print("cancelled; nothing was changed")
                return 2
            result = await run_compare(
                ctx, host, port, args.compare, settings=settings, progress=display.sweep
            )
    finally:
        await fleet.close()
    _print_compare(result, args.json)
    saved = True
    if args.save_baseline:
        for run in result.runs:
            if run.sweep is not None and run.sweep.levels:
                saved = _save(cfg, run.profile, run.sweep, args.json) and saved
    return 0 if result.ok and saved else 1


async def _compare_plan(
    ctx: ActionContext, host: str, port: int, profiles: list[str], settings: SweepSettings
) -> Plan:
    snap = await snapshot(ctx.ssh[host], ctx.config.host(host).python)
    process = snap.server(port)
    now = (
        f"pid {process.main.pid}: {shlex.join(process.main.argv)[:160]}"
        if process
        else "nothing (the port is freed again)"
    )
    levels = ",".join(map(str, settings.levels))
    return Plan(
        "bench --compare",
        f"{host}:{port}",
        [
            f"for each of {', '.join(profiles)}: relaunch {host}:{port} with it "
            "(preflight, stop, launch, ready), "
            f"then sweep concurrency {levels}",
            f"afterwards put back what runs now: {now}",
            "a failure or Ctrl-C also puts it back",
        ],
    )


def _print_compare(result: CompareResult, as_json: bool) -> None:
    if as_json:
        print_json(result.to_dict())
        return
    out = stdout()
    differences = render.differences_table(result)
    if differences is not None:
        out.print(differences)
    out.print(render.numbers_table(result))
    for run in result.runs:
        if run.error:
            out.print(safe(f"{run.profile}: {run.error}", "bold red"))
        for warning in run.sweep.warnings if run.sweep else []:
            out.print(safe(f"warning: {run.profile}: {warning}", "yellow"))
    out.print(
        safe(f"put back: {result.restored}", "bold green" if result.restored_ok else "bold red")
    )
