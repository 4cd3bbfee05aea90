"""`upgrade HOST:PORT --to VERSION`: the server's profile translated to SGLang VERSION (old and new
side by side, by meaning, changes first, each with its reason), the model card's minimum SGLang,
where VERSION will live and every remote command (sglconsole.upgrade.prepare: the same record
the console's `U` confirms); then, agreed to, the install, canary, A/B and verdict
(sglconsole.upgrade.run). --dry-run changes nothing; --json gives the translation and the verdict.
Exit 0: translated (dry run) or promoted; 1: cannot be translated, or rolled back; 2: refused."""

from __future__ import annotations

import argparse

from rich.table import Table
from rich.text import Text

from sglconsole import config
from sglconsole.actions.base import ActionContext, Interrupted, Plan
from sglconsole.commands.actions import confirm, print_stage, result_json, target
from sglconsole.commands.output import print_json
from sglconsole.commands.registry import command, config_path, run_async, stderr, stdout
from sglconsole.config.flag_tables import release_of
from sglconsole.core.text import safe
from sglconsole.errors import ConsoleError, UsageError
from sglconsole.remote.ssh.connection import SshFleet
from sglconsole.upgrade.prepare import Prepared, prepare
from sglconsole.upgrade.run import upgrade

KIND_STYLE = {"kept": "dim", "renamed": "yellow", "removed": "red", "added": "green"}


@command("upgrade", "carry a server's proven profile to another SGLang release (--dry-run first)")
def _upgrade(parser: argparse.ArgumentParser):
    parser.add_argument("target", metavar="HOST:PORT")
    parser.add_argument("--to", required=True, metavar="VERSION", help="the SGLang release")
    parser.add_argument(
        "--python", help="an interpreter on the host that already has SGLang VERSION"
    )
    parser.add_argument(
        "--gpus",
        metavar="G[,G...]",
        help="run the canary on these free GPUs, beside the old server (which keeps serving)",
    )
    parser.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    parser.add_argument(
        "--dry-run", action="store_true", help="print the translation and every remote command"
    )
    parser.add_argument("--json", action="store_true", help="the translation (and verdict)")

    def handle(args: argparse.Namespace) -> int:
        cfg = config.load(config_path(args))
        host, port = target(args, cfg)
        args.gpus = gpu_list(args.gpus)
        args.dry_run = args.dry_run or getattr(args, "global_dry_run", False)
        return run_async(_run(cfg, args, host, port, release_of(args.to)))

    return handle


async def _run(cfg: config.Config, args: argparse.Namespace, host: str, port: int, version: str):
    fleet = SshFleet(cfg.hosts)
    quiet = args.json or args.dry_run
    ctx = ActionContext(cfg, fleet, progress=(lambda _: None) if quiet else print_stage)
    try:
        try:
            prepared = await prepare(ctx, host, port, version, args.python, args.gpus)
        except ConsoleError as exc:
            stderr().print(safe(f"upgrade {host}:{port}: {exc}", "red"))
            return 1
        report = prepared.report(bool(args.dry_run))
        final = not prepared.translation.ok or args.dry_run
        if args.json and final:  # else: once, with the verdict
            print_json(report)
        elif not args.json:
            _print(prepared, bool(args.dry_run))
        if final:
            return 0 if prepared.translation.ok else 1
        if args.json and not args.yes:
            stderr().print("upgrade --json changes the host: give --yes too (nothing was changed)")
            return 2
        plan = Plan("upgrade", prepared.target, prepared.lines()[-len(prepared.commands) - 1 :])
        if not args.json and not confirm(plan, args.yes):
            stderr().print("cancelled; nothing was changed")
            return 2
        try:
            result = await upgrade(
                ctx,
                host,
                port,
                translation=prepared.translation,
                install=prepared.install,
                gpus=prepared.gpus,
            )
        except Interrupted as exc:
            stderr().print(safe(f"upgrade {host}:{port} interrupted: {exc}", "yellow"))
            return 130
        except ConsoleError as exc:
            result = ctx.result("upgrade", prepared.target, False, str(exc), verdict="stopped")
    finally:
        await fleet.close()
    if args.json:
        print_json({**report, **result_json(result)})
    else:
        stdout().print(safe(result.summary, "bold green" if result.ok else "bold red"))
    return 0 if result.ok else 1


def gpu_list(text: str | None) -> tuple[int, ...]:
    """`--gpus 2,3` -> (2, 3)."""
    if not text:
        return ()
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise UsageError(f"--gpus takes GPU indexes, e.g. 2 or 2,3 (not {text!r})") from None


def _print(prepared: Prepared, dry_run: bool) -> None:
    out = stdout()
    translation = prepared.translation
    out.print(
        Text(
            f"upgrade {prepared.target}: profile {prepared.profile}, SGLang "
            f"{prepared.current} -> {translation.to_version}",
            style="bold",
        )
    )
    card = prepared.card_line()
    if card:
        out.print(safe("  " + card, "bold yellow" if "older" in card else ""))
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    table.add_column("", no_wrap=True)
    table.add_column(f"SGLang {prepared.current} (proven)", overflow="fold")
    table.add_column(f"SGLang {translation.to_version} (translated)", overflow="fold")
    table.add_column("why", overflow="fold")
    kept = [change for change in translation.changes if change.kind == "kept"]
    for change in (*translation.changed, *kept):
        table.add_row(
            Text(change.kind, style=KIND_STYLE.get(change.kind, "bold red")),
            " ".join(change.old),
            " ".join(change.new) if change.new else "-",
            change.reason,
        )
    out.print(table)
    for note in translation.notes:
        out.print(safe("  note: " + note, "dim"))
    if not translation.ok:
        out.print(safe(f"cannot translate to SGLang {translation.to_version}: stopped", "bold red"))
        return
    out.print(Text(f"where SGLang {translation.to_version} lives: {prepared.install.python}"))
    title = "dry run: these remote commands would run:" if dry_run else "will run:"
    out.print(Text(title, style="bold yellow"))
    for line in prepared.commands:
        out.print(safe("  " + line), soft_wrap=True)
