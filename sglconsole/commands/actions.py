"""kill, relaunch, restore, rollback, probe: the registry's actions from the command line.

Each is a `NAME HOST:PORT` subcommand of the action registry, sglconsole.catalog (bench and
capture have subcommands of their own). Those that need confirmation show exactly
what will happen and ask first (unless --yes); --dry-run prints the remote commands
that would change the host instead. Exit 0 on success, 1 when the action ran and
failed, 2 when it was refused.
"""

from __future__ import annotations

import argparse
import sys

from rich.text import Text

from sglconsole import config
from sglconsole.actions.base import (
    ActionContext,
    Interrupted,
    Plan,
    Stage,
    StageFailed,
    StageState,
)
from sglconsole.actions.registry import ROUTED, Action
from sglconsole.catalog import ACTIONS
from sglconsole.commands.drift import parse_target
from sglconsole.commands.output import print_json
from sglconsole.commands.registry import command, config_path, run_async, stderr, stdout
from sglconsole.config.routers import routes_of
from sglconsole.core.text import safe
from sglconsole.errors import RemoteError, UsageError
from sglconsole.remote.ssh.connection import SshFleet

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
    for warning in plan.warnings:
        out.print(safe("  ! " + warning, "bold yellow"))
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
        parser.add_argument(
            "--verbose",
            "-v",
            action="store_true",
            help="with --dry-run: print the host helpers' Python source too",
        )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


async def _run(
    cfg: config.Config, args: argparse.Namespace, action: Action, host: str, port: int
) -> int:
    name = action.name
    options = {option: read(args) for option, read in OPTIONS.get(name, {}).items()}
    if name in ROUTED:
        options.update(_keep(args))
    fleet = SshFleet(cfg.hosts)
    ctx = ActionContext(
        cfg,
        fleet,
        progress=print_stage if not args.json else (lambda stage: None),
        dry_run=getattr(args, "dry_run", False) or getattr(args, "global_dry_run", False),
    )
    try:
        plan = None
        if action.confirm:
            plan = await action.plan(ctx, host, port, **options)
            if not args.json and not confirm(plan, getattr(args, "yes", False) or ctx.dry_run):
                stderr().print("cancelled; nothing was changed")
                return 2
        try:
            result = await action.run(ctx, host, port, plan, **options)
        except Interrupted as exc:  # Ctrl-C after the launch: say what keeps running, and then
            stderr().print(safe(f"{name} {host}:{port} {exc}", "yellow"))
            return 130
        except StageFailed as exc:
            return _report_failure(ctx, name, args, str(exc))
        except RemoteError as exc:
            return _report_failure(ctx, name, args, str(exc))
    finally:
        await fleet.close()
    if ctx.dry_run and not args.json:
        stdout().print(Text("dry run: these remote commands would run:", style="bold yellow"))
        for line in ctx.commands if getattr(args, "verbose", False) else ctx.commands_short:
            stdout().print(safe("  " + line), soft_wrap=True)
    if args.json:
        print_json(result_json(result))
    else:
        stdout().print(safe(result.summary, "bold green" if result.ok else "bold red"))
    return 0 if result.ok else 1


def next_step(message: str, target: str) -> str:
    """What can help after a failed relaunch or restore. A proven config that now loops or answers
    wrongly is not fixed by running it again, nor by a rollback to the same thing."""
    if "probe: DEGENERATE" in message or "probe: WRONG" in message:
        return (
            "the server runs its proven profile and still answers wrongly: the SGLang on the "
            "host is the likeliest cause (a version with a known bug loops). A rollback would "
            "bring back the same config; try the profile with another SGLang (`sglconsole upgrade "
            f"{target} --to VERSION` translates it and tries it on a canary), or roll back only if "
            f"{target} ran something else before"
        )
    return f"to bring back what ran before: sglconsole rollback {target}"


def _report_failure(ctx: ActionContext, name: str, args: argparse.Namespace, message: str) -> int:
    if args.json:
        print_json(
            {
                "action": name,
                "ok": False,
                "error": message,
                "stages": [_stage_json(stage) for stage in ctx.stages],
            }
        )
    else:
        stdout().print(safe(f"{name} failed: {message}", "bold red"))
        if name in ("relaunch", "restore") and not ctx.dry_run:
            stdout().print(safe(next_step(message, args.target), "yellow"))
    return 1


def _stage_json(stage: Stage) -> dict:
    return {
        "name": stage.name,
        "state": stage.state.value,
        "detail": stage.detail,
        "duration_s": stage.duration,
        "evidence": stage.evidence,
    }


def result_json(result) -> dict:
    data = {
        key: (value.to_dict() if hasattr(value, "to_dict") else value)
        for key, value in result.data.items()
    }
    return {
        "action": result.action,
        "target": result.target,
        "ok": result.ok,
        "summary": result.summary,
        "stages": [_stage_json(stage) for stage in result.stages],
        "evidence": result.evidence,
        **data,
    }


# the CLI's own flags of an action: each adds its arguments, and names the option it becomes
def _profile_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", help="launch this profile instead of the server's own")


def _probe_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--prompt", help="ask this instead of the profile's probe prompt")
    parser.add_argument("--max-tokens", type=int)
    parser.add_argument(
        "--no-throughput", action="store_true", help="skip the 512-token throughput request"
    )


def _all_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--all",
        action="store_true",
        help="HOST (no port): restore every server of the host, one after another (a rolling"
        " restore: behind a router, it stops at the first server that fails)",
    )
    _keep_flag(parser)


def _keep_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--keep",
        type=int,
        metavar="N",
        help="behind a router: touch a server only while N other healthy workers of each of its"
        " routers stay in service",
    )


def _keep(args: argparse.Namespace) -> dict:
    return {"keep": args.keep} if getattr(args, "keep", None) is not None else {}


def _profile_keep_flags(parser: argparse.ArgumentParser) -> None:
    _profile_flag(parser)
    _keep_flag(parser)


FLAGS = {
    "relaunch": _profile_keep_flags,
    "restore": _all_flag,
    "kill": _keep_flag,
    "rollback": _keep_flag,
    "probe": _probe_flags,
}
OPTIONS = {
    "relaunch": {"profile_name": lambda args: args.profile},
    "probe": {
        "prompt": lambda args: args.prompt,
        "max_tokens": lambda args: args.max_tokens,
        "throughput": lambda args: not args.no_throughput,
    },
}


def _builder(action: Action):
    def build(parser: argparse.ArgumentParser):
        if action.name in FLAGS:
            FLAGS[action.name](parser)
        _common(parser, action.confirm)

        def handle(args: argparse.Namespace) -> int:
            if getattr(args, "all", False):
                return _restore_all(args, action)
            cfg = config.load(config_path(args))
            host, port = target(args, cfg)
            return run_async(_run(cfg, args, action, host, port))

        return handle

    return build


def _restore_all(args: argparse.Namespace, action: Action) -> int:
    cfg = config.load(config_path(args))
    host, port = parse_target(args.target)
    if port is not None:
        raise UsageError("--all takes a HOST, not HOST:PORT")
    worst = 0
    servers = cfg.host(host).servers
    for index, server in enumerate(servers):  # one at a time: never two starting on one GPU
        args.target = f"{host}:{server.port}"
        stdout().print(Text(f"== {args.target}", style="bold"))
        code = run_async(_run(cfg, args, action, host, server.port))
        worst = max(worst, code)
        rest = [f"{host}:{later.port}" for later in servers[index + 1 :]]
        if code != 0 and routes_of(cfg, host, server.port) and rest:
            # a rolling restore behind a router: taking out more would only shrink the service
            stderr().print(
                safe(f"rolling restore stopped at {args.target}; untouched: {', '.join(rest)}")
            )
            break
    return worst


for _action in ACTIONS.values():
    if _action.command:
        command(_action.name, _action.help)(_builder(_action))
