"""capture: write what runs (a server, or a systemd unit) into hosts.yaml as a profile."""

from __future__ import annotations

import argparse

from sglconsole import actions, config
from sglconsole.actions.base import ActionContext, StageFailed
from sglconsole.commands.actions import print_stage
from sglconsole.commands.drift import parse_target
from sglconsole.commands.registry import command, config_path, run_async, stdout
from sglconsole.core.text import safe
from sglconsole.errors import UsageError
from sglconsole.remote.ssh.connection import SshFleet


@command(
    "capture",
    "turn a running server (HOST:PORT) or a systemd unit (HOST --from-systemd UNIT) into a profile",
)
def _capture(parser: argparse.ArgumentParser):
    parser.add_argument("target", metavar="HOST[:PORT]")
    parser.add_argument(
        "--as", dest="name", required=True, metavar="NAME", help="name of the new profile"
    )
    parser.add_argument(
        "--from-systemd",
        metavar="UNIT",
        help="read the unit's ExecStart/Environment/WorkingDirectory",
    )
    parser.add_argument(
        "--force", action="store_true", help="replace an existing profile of that name"
    )

    def handle(args: argparse.Namespace) -> int:
        cfg = config.load(config_path(args))
        host, port = parse_target(args.target)
        cfg.host(host)
        if args.from_systemd is None and port is None:
            raise UsageError("give HOST:PORT of a running server, or HOST --from-systemd UNIT")
        return run_async(_run(cfg, host, port, args))

    return handle


async def _run(cfg: config.Config, host: str, port: int | None, args: argparse.Namespace) -> int:
    fleet = SshFleet(cfg.hosts)
    ctx = ActionContext(cfg, fleet, progress=print_stage)
    try:
        if args.from_systemd:
            result = await actions.capture_unit(
                ctx, host, args.from_systemd, args.name, force=args.force
            )
        else:
            result = await actions.capture(ctx, host, port, args.name, force=args.force)
    except StageFailed as exc:
        stdout().print(safe(f"capture failed: {exc}", "bold red"))
        return 1
    finally:
        await fleet.close()
    stdout().print(safe(result.summary, "bold green"))
    return 0
