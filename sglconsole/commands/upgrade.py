"""`upgrade HOST:PORT --to VERSION`: the server's profile translated to SGLang VERSION (old and new
side by side, by meaning, each change with its reason), the model card's minimum SGLang, where
VERSION will live and every remote command. --dry-run changes nothing; --json gives the
translation. Exit 0: translated; 1: it cannot be translated (or the host could not be read);
2: refused (usage)."""

from __future__ import annotations

import argparse
import shlex

from rich.table import Table
from rich.text import Text

from sglconsole import config
from sglconsole.actions.base import ActionContext, Interrupted, Plan
from sglconsole.actions.upgrade.install import plan_install
from sglconsole.commands.actions import confirm, print_stage, result_json, target
from sglconsole.commands.output import print_json
from sglconsole.commands.registry import command, config_path, run_async, stderr, stdout
from sglconsole.config.flag_tables import release_of
from sglconsole.config.launch_spec import MODULE, launch_spec
from sglconsole.config.upgrade import Translation, translate
from sglconsole.config.upgrade.options import split
from sglconsole.core.flag_table import version_key
from sglconsole.core.text import safe
from sglconsole.errors import ConsoleError, RemoteError
from sglconsole.remote.model_card import ModelCard, read_model_card
from sglconsole.remote.parser_cache import installed_version
from sglconsole.remote.ssh.connection import SshFleet
from sglconsole.upgrade.run import upgrade

KIND_STYLE = {"kept": "dim", "renamed": "yellow", "removed": "red", "added": "green"}


@command("upgrade", "carry a server's proven profile to another SGLang release (--dry-run first)")
def _upgrade(parser: argparse.ArgumentParser):
    parser.add_argument("target", metavar="HOST:PORT")
    parser.add_argument("--to", required=True, metavar="VERSION", help="the SGLang release")
    parser.add_argument(
        "--python", help="an interpreter on the host that already has SGLang VERSION"
    )
    parser.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation")
    parser.add_argument(
        "--dry-run", action="store_true", help="print the translation and every remote command"
    )
    parser.add_argument("--json", action="store_true", help="the translation (and verdict)")

    def handle(args: argparse.Namespace) -> int:
        cfg = config.load(config_path(args))
        host, port = target(args, cfg)
        return run_async(_run(cfg, args, host, port, release_of(args.to)))

    return handle


def model_path(args: list[str] | tuple[str, ...], version: str) -> str | None:
    for option in split(args, version):
        if option.flag in ("--model-path", "--model") and option.values:
            return option.values[0]
    return None


async def _run(
    cfg: config.Config, args: argparse.Namespace, host: str, port: int, target_version: str
) -> int:
    server = cfg.server(host, port)
    profile = cfg.profiles[server.profile]
    spec = launch_spec(cfg, host, port)
    fleet = SshFleet(cfg.hosts)
    try:
        ssh = fleet[host]
        current = await installed_version(ssh, spec.python)
        if current is None:
            stderr().print(f"upgrade {host}:{port}: {spec.python} on {host} has no readable SGLang")
            return 1
        folder = model_path(profile.args, release_of(current))
        card = (
            await read_model_card(ssh, spec.python, folder)
            if folder
            else ModelCard(None, None, None)
        )
    except RemoteError as exc:
        stderr().print(safe(f"upgrade {host}:{port}: {exc}", "red"))
        return 1
    finally:
        await fleet.close()
    translation = translate(
        profile.args,
        dict(profile.env),
        from_version=release_of(current),
        to_version=target_version,
        arch=card.architecture,
    )
    install = plan_install(spec.python, target_version, args.python)
    canary = (install.python, "-m", MODULE, *translation.new_args)
    if "--port" not in canary:
        canary += ("--port", str(port))
    commands = [shlex.join(step) for step in install.steps] + [_shown(canary, translation)]
    report = {
        "target": f"{host}:{port}",
        "profile": server.profile,
        "from_version": current,
        "to_version": target_version,
        "model_card": _card_json(card, current, target_version),
        "python": install.python,
        "venv": install.venv,
        "translation": translation.to_dict(),
        "commands": commands,
        "dry_run": bool(args.dry_run),
        "verdict": None,
    }
    final = not translation.ok or args.dry_run
    if args.json and final:  # else: once, with the verdict
        print_json(report)
    elif not args.json:
        _print(report, translation, card)
    if final:
        return 0 if translation.ok else 1
    plan = Plan(
        "upgrade",
        f"{host}:{port}",
        [*commands[:-1], f"canary on the same GPUs: {commands[-1]}", *AFTER],
    )
    if args.json and not args.yes:
        stderr().print("upgrade --json changes the host: give --yes too (nothing was changed)")
        return 2
    if not args.json and not confirm(plan, args.yes):
        stderr().print("cancelled; nothing was changed")
        return 2
    return await _execute(cfg, args, host, port, translation, install, report)


AFTER = (
    "then: probe, compare with the baseline; promote (hosts.yaml points at the new profile, the"
    " old one kept) or roll back to what runs now",
)


async def _execute(cfg, args, host, port, translation, install, report) -> int:
    fleet = SshFleet(cfg.hosts)
    ctx = ActionContext(cfg, fleet, progress=print_stage if not args.json else (lambda _: None))
    try:
        result = await upgrade(ctx, host, port, translation=translation, install=install)
    except Interrupted as exc:
        stderr().print(safe(f"upgrade {host}:{port} interrupted: {exc}", "yellow"))
        return 130
    except ConsoleError as exc:
        result = ctx.result("upgrade", f"{host}:{port}", False, str(exc), verdict="stopped")
    finally:
        await fleet.close()
    if args.json:
        print_json({**report, **result_json(result)})
    else:
        stdout().print(safe(result.summary, "bold green" if result.ok else "bold red"))
    return 0 if result.ok else 1


def _shown(argv: tuple[str, ...], translation: Translation) -> str:
    env = " ".join(f"{name}={shlex.quote(value)}" for name, value in translation.new_env.items())
    return f"{env} {shlex.join(argv)}".strip()


def _card_json(card: ModelCard, current: str, target_version: str) -> dict:
    return {
        "architecture": card.architecture,
        "min_sglang": card.min_sglang,
        "file": card.card,
        "host_older": _older(current, card.min_sglang),
        "target_older": _older(target_version, card.min_sglang),
    }


def _older(version: str, minimum: str | None) -> bool | None:
    if minimum is None:
        return None
    return version_key(release_of(version)) < version_key(minimum)


def _print(report: dict, translation: Translation, card: ModelCard) -> None:
    out = stdout()
    out.print(
        Text(
            f"upgrade {report['target']}: profile {report['profile']}, SGLang "
            f"{report['from_version']} -> {report['to_version']}",
            style="bold",
        )
    )
    if card.min_sglang:
        older = report["model_card"]["host_older"]
        line = f"  model card ({card.card}): sglang>={card.min_sglang}"
        line += f"; the host's {report['from_version']} is older" if older else ""
        out.print(safe(line, "bold yellow" if older else ""))
    table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
    table.add_column("", no_wrap=True)
    table.add_column(f"SGLang {translation.from_version} (proven)", overflow="fold")
    table.add_column(f"SGLang {translation.to_version} (translated)", overflow="fold")
    table.add_column("why", overflow="fold")
    ordered = [*translation.changed, *(kept for kept in translation.changes if kept.kind == "kept")]
    for change in ordered:
        style = KIND_STYLE.get(change.kind, "bold red")
        table.add_row(
            Text(change.kind, style=style),
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
    out.print(Text(f"where SGLang {report['to_version']} lives: {report['python']}", style="bold"))
    title = "dry run: these remote commands would run:" if report["dry_run"] else "will run:"
    out.print(Text(title, style="bold yellow"))
    for line in report["commands"]:
        out.print(safe("  " + line), soft_wrap=True)
