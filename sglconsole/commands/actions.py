"""kill, relaunch, restore, probe, rollback: the actions from the command line.

Destructive ones show exactly what will happen and ask first (unless --yes);
--dry-run prints the remote commands that would change the host instead.
Exit 0 on success, 1 when the action ran and failed, 2 when it was refused.
"""

from __future__ import annotations

import argparse
import json
import sys

from rich.text import Text

from sglconsole import actions, config
from sglconsole.actions.base import ActionContext, Plan, Stage, StageFailed, StageState
from sglconsole.commands.drift import parse_target
from sglconsole.commands.registry import command, config_path, run_async, stderr, stdout
from sglconsole.core.text import safe
from sglconsole.errors import RemoteError, UsageError
from sglconsole.remote.ssh import Fleet

STATE_STYLE = {
    StageState.OK: "green",
    StageState.FAILED: "bold red",
    StageState.SKIPPED: "dim",
    StageState.RUNNING: "cyan",
}


def print_stage(stage: Stage) -> None:
    if stage.state == StageState.RUNNING:
        return
    line = safe(stage.line(), STATE_STYLE[stage.state])
    stdout().print(line)
    for evidence in stage.evidence[-30:]:
        stdout().print(safe("    " + evidence, "dim" if stage.state == StageState.OK else "red"))


def confirm(plan: Plan, yes: bool) -> bool:
    out = stdout()
    out.print(Text(f"{plan.action} {plan.target}", style="bold"))
    for line in plan.lines:
        out.print(safe("  " + line))
    if yes or not plan.destructive:
        return True
    if not sys.stdin.isatty():
        raise UsageError(
            f"{plan.action} changes {plan.target}: refusing without --yes (stdin is not a terminal)"
        )
    answer = input(f"{plan.action} {plan.target}? [y/N] ").strip().lower()
    return answer in ("y", "yes")


def target(args: argparse.Namespace, cfg: config.Config) -> tuple[str, int]:
    host, port = parse_target(args.target)
    if port is None:
        raise UsageError(f"give HOST:PORT (e.g. {host}:30000)")
    cfg.host(host)
    return host, port


def _common(parser: argparse.ArgumentParser, destructive: bool = True) -> None:
    parser.add_argument("target", metavar="HOST:PORT")
    if destructive:
        parser.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="print the remote commands instead of running them",
        )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


async def _run(cfg: config.Config, args: argparse.Namespace, name: str, planner, runner) -> int:
    fleet = Fleet(cfg.hosts)
    ctx = ActionContext(
        cfg,
        fleet,
        progress=print_stage if not args.json else (lambda s: None),
        dry_run=getattr(args, "dry_run", False) or getattr(args, "global_dry_run", False),
    )
    try:
        if planner is not None:
            plan = await planner(ctx)
            if not args.json and not confirm(plan, getattr(args, "yes", False) or ctx.dry_run):
                stderr().print("cancelled; nothing was changed")
                return 2
        try:
            result = await runner(ctx)
        except StageFailed as exc:
            return _report_failure(ctx, name, args, str(exc))
        except RemoteError as exc:
            return _report_failure(ctx, name, args, str(exc))
    finally:
        await fleet.close()
    if ctx.dry_run and not args.json:
        stdout().print(Text("dry run: these remote commands would run:", style="bold yellow"))
        for line in ctx.commands:
            stdout().print(safe("  " + line), soft_wrap=True)
    if args.json:
        print(json.dumps(_result_json(result), indent=2, default=str))
    else:
        stdout().print(safe(result.summary, "bold green" if result.ok else "bold red"))
    return 0 if result.ok else 1


def _report_failure(ctx: ActionContext, name: str, args: argparse.Namespace, message: str) -> int:
    if args.json:
        print(
            json.dumps(
                {
                    "action": name,
                    "ok": False,
                    "error": message,
                    "stages": [_stage_json(s) for s in ctx.stages],
                },
                indent=2,
                default=str,
            )
        )
    else:
        stdout().print(safe(f"{name} failed: {message}", "bold red"))
        if name in ("relaunch", "restore") and not ctx.dry_run:
            stdout().print(
                safe(f"to bring back what ran before: sglconsole rollback {args.target}", "yellow")
            )
    return 1


def _stage_json(stage: Stage) -> dict:
    return {
        "name": stage.name,
        "state": stage.state.value,
        "detail": stage.detail,
        "duration_s": stage.duration,
        "evidence": stage.evidence,
    }


def _result_json(result) -> dict:
    data = {k: (v.to_dict() if hasattr(v, "to_dict") else v) for k, v in result.data.items()}
    return {
        "action": result.action,
        "target": result.target,
        "ok": result.ok,
        "summary": result.summary,
        "stages": [_stage_json(s) for s in result.stages],
        "evidence": result.evidence,
        **data,
    }


def _handler(name: str, planner_of, runner_of, destructive: bool = True):
    def build(parser: argparse.ArgumentParser):
        _common(parser, destructive)
        extra = getattr(build, "extra", None)
        if extra:
            extra(parser)

        def handle(args: argparse.Namespace) -> int:
            cfg = config.load(config_path(args))
            host, port = target(args, cfg)
            planner = planner_of(host, port, args) if planner_of else None
            return run_async(_run(cfg, args, name, planner, runner_of(host, port, args)))

        return handle

    return build


def _kill_build(parser):
    return _handler(
        "kill",
        lambda h, p, a: lambda ctx: actions.plan_kill(ctx, h, p),
        lambda h, p, a: lambda ctx: actions.kill(ctx, h, p),
    )(parser)


def _relaunch_build(parser):
    parser.add_argument("--profile", help="launch this profile instead of the server's own")
    return _handler(
        "relaunch",
        lambda h, p, a: lambda ctx: actions.plan_relaunch(ctx, h, p, a.profile),
        lambda h, p, a: lambda ctx: actions.relaunch(ctx, h, p, a.profile),
    )(parser)


def _restore_build(parser):
    parser.add_argument(
        "--all",
        action="store_true",
        help="HOST (no port): restore every server of the host, one after another",
    )
    single = _handler(
        "restore",
        lambda h, p, a: lambda ctx: _restore_plan(ctx, h, p),
        lambda h, p, a: lambda ctx: actions.restore(ctx, h, p),
    )(parser)

    def handle(args: argparse.Namespace) -> int:
        if not args.all:
            return single(args)
        cfg = config.load(config_path(args))
        host, port = parse_target(args.target)
        if port is not None:
            raise UsageError("--all takes a HOST, not HOST:PORT")
        worst = 0
        for server in cfg.host(host).servers:  # one at a time: never two starting on the same GPU
            args.target = f"{host}:{server.port}"
            stdout().print(Text(f"== {args.target}", style="bold"))
            code = run_async(
                _run(
                    cfg,
                    args,
                    "restore",
                    lambda ctx, p=server.port: _restore_plan(ctx, host, p),
                    lambda ctx, p=server.port: actions.restore(ctx, host, p),
                )
            )
            worst = max(worst, code)
        return worst

    return handle


async def _restore_plan(ctx, host, port) -> Plan:
    plan = await actions.plan_relaunch(ctx, host, port)
    plan.action = "restore"
    plan.lines.append(
        "then: wait for ready, probe, compare tok/s and accept length with the baseline"
    )
    return plan


def _rollback_build(parser):
    async def planner(ctx, h, p):
        return actions.plan_rollback(ctx, h, p)

    return _handler(
        "rollback",
        lambda h, p, a: lambda ctx: planner(ctx, h, p),
        lambda h, p, a: lambda ctx: actions.rollback(ctx, h, p),
    )(parser)


def _probe_build(parser):
    parser.add_argument("--prompt", help="ask this instead of the profile's probe prompt")
    parser.add_argument("--max-tokens", type=int)
    parser.add_argument(
        "--no-throughput", action="store_true", help="skip the 512-token throughput request"
    )
    return _handler(
        "probe",
        None,
        lambda h, p, a: (
            lambda ctx: actions.probe(
                ctx, h, p, a.prompt, a.max_tokens, throughput=not a.no_throughput
            )
        ),
        destructive=False,
    )(parser)


command("kill", "stop a server and everything it started (asks first; saved for rollback)")(
    _kill_build
)
command("relaunch", "preflight, stop, and start the proven profile; follow it to ready")(
    _relaunch_build
)
command("restore", "relaunch the proven profile, probe it, and compare with its baseline")(
    _restore_build
)
command("rollback", "relaunch exactly what ran before the last kill/relaunch/restore")(
    _rollback_build
)
command("probe", "ask a server a question with a known answer; time it; detect degenerate output")(
    _probe_build
)
