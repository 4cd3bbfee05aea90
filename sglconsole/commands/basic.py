"""check, hosts, run: the foundation subcommands."""

from __future__ import annotations

import argparse
import os
import sys

from rich.markup import escape
from rich.table import Table

from sglconsole import config
from sglconsole.commands.registry import command, config_path, run_async, stderr, stdout
from sglconsole.errors import ConfigError, HostUnreachable
from sglconsole.remote.ssh.connection import SshFleet
from sglconsole.remote.ssh.target import config_files, resolve


@command(
    "check",
    "validate hosts.yaml and the files it names (exit 0, or 2 with file:line: field: problem)",
)
def _check(parser: argparse.ArgumentParser):
    parser.add_argument(
        "--against",
        metavar="HOST",
        help="also preflight every profile used on HOST (exit 1 if one fails)",
    )

    def handle(args: argparse.Namespace) -> int:
        if args.against:
            cfg = config.load(config_path(args))
            cfg.host(args.against)
            return run_async(_preflight_host(cfg, args.against))
        # every class of problem at once: one run of check names all there is to fix
        cfg, problems = config.check_file(config_path(args))
        if cfg is not None:
            problems += _ssh_config_problems(cfg)
        if problems or cfg is None:
            raise ConfigError(problems)
        servers = sum(len(host.servers) for host in cfg.hosts.values())
        stdout().print(
            f"{escape(str(cfg.path))}: ok ({len(cfg.hosts)} hosts, {servers} servers,"
            f" {len(cfg.profiles)} profiles)"
        )
        for name, host in cfg.hosts.items():
            if host.known_hosts == "none":
                stderr().print(
                    f"[yellow]warning:[/yellow] {escape(name)}:"
                    " host key checking is disabled (known_hosts: none)"
                )
        return 0

    return handle


def _ssh_config_problems(cfg: config.Config) -> list[str]:
    """Files the hosts' ssh_config names (IdentityFile, UserKnownHostsFile) that are missing,
    where hosts.yaml does not name its own."""
    problems = []
    for name, host in cfg.hosts.items():
        try:
            target = resolve(host, name)
        except HostUnreachable as exc:
            problems.append(f"{cfg.path}: hosts.{name}: {exc.message}")
            continue
        files = config_files(host) or []
        source = f"ssh_config {files[0]}" if files else "ssh_config"
        named = [
            *(
                ("IdentityFile", path)
                for path in ([] if host.identity_file else target.identity_files)
            ),
            *(
                ("UserKnownHostsFile", path)
                for path in ([] if host.known_hosts else target.known_hosts_files)
            ),
        ]
        for option, path in named:
            if not os.path.exists(os.path.expanduser(path)):
                problems.append(
                    f"{cfg.path}: hosts.{name}: {option} {path} (from {source}) does not exist"
                )
    return problems


async def _preflight_host(cfg: config.Config, host: str) -> int:
    from sglconsole.actions.preflight import run_preflight
    from sglconsole.config.launch_spec import launch_spec
    from sglconsole.remote.inspect import snapshot

    fleet = SshFleet(cfg.hosts)
    out = stdout()
    failed = 0
    try:
        snap = await snapshot(fleet[host], cfg.host(host).python)
        for server in cfg.host(host).servers:
            spec = launch_spec(cfg, host, server.port)
            result = await run_preflight(fleet[host], spec, snap)
            failed += not result.ok
            out.print(
                f"[bold]{escape(host)}:{server.port}[/bold] profile {escape(server.profile)}: "
                + ("[green]ok[/green]" if result.ok else "[red]FAILED[/red]")
            )
            for line in result.lines():
                out.print("  " + escape(line), style=None if line.startswith("ok") else "red")
    finally:
        await fleet.close()
    return 1 if failed else 0


@command("hosts", "show the hosts, servers and profiles in hosts.yaml")
def _hosts(parser: argparse.ArgumentParser):
    def handle(args: argparse.Namespace) -> int:
        cfg = config.load(config_path(args))
        out = stdout()
        out.print(hosts_table(cfg))
        out.print(profiles_table(cfg))
        return 0

    return handle


def hosts_table(cfg: config.Config) -> Table:
    table = Table(title=f"hosts ({escape(str(cfg.path))})", title_justify="left")
    for column in ("host", "ssh", "via", "server", "profile", "gpus", "launcher", "log"):
        table.add_column(column)
    for name, host in cfg.hosts.items():
        ssh = _ssh_column(host)
        via = " ".join(
            filter(None, [f"jump {host.jump}" if host.jump else "", " ".join(host.exec_prefix)])
        )
        rows = host.servers or [None]
        for index, server in enumerate(rows):
            first = index == 0
            table.add_row(
                escape(name) if first else "",
                escape(ssh) if first else "",
                escape(via) if first else "",
                str(server.port) if server else "-",
                escape(server.profile) if server else "",
                ",".join(map(str, server.gpus)) if server else "",
                escape(server.launcher) if server else "",
                escape(server.log or "") if server else "",
            )
    return table


def _ssh_column(host: config.Host) -> str:
    """user@hostname:port as SSH will use them; "(ssh_config ALIAS)" when the ssh_config gave
    some of them."""
    try:
        target = resolve(host)
    except HostUnreachable:
        port = f":{host.port}" if host.port else ""
        return f"{host.user + '@' if host.user else ''}{host.address}{port} (ssh_config unreadable)"
    if target.from_ssh_config:
        return f"{target.ssh} (ssh_config {host.address})"
    return target.ssh


def profiles_table(cfg: config.Config) -> Table:
    table = Table(title="profiles", title_justify="left")
    for column in ("profile", "python", "sglang", "baseline tok/s", "args"):
        table.add_column(column, overflow="fold")
    for name, profile in cfg.profiles.items():
        baseline = profile.baseline.gen_throughput if profile.baseline else None
        table.add_row(
            escape(name),
            escape(profile.python),
            escape(profile.requires_sglang or "any"),
            f"{baseline:g}" if baseline else "-",
            escape(" ".join(profile.args)),
        )
    return table


@command("run", "run a command on a host through its SSH + exec_prefix: run HOST -- CMD...")
def _run(parser: argparse.ArgumentParser):
    parser.add_argument("host")
    parser.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- CMD")
    parser.add_argument("--timeout", type=float, default=60)

    def handle(args: argparse.Namespace) -> int:
        argv = list(args.argv)
        while argv[:1] in (["-c"], ["--config"]) and len(argv) > 1:
            args.config = argv[1]  # `run HOST -c FILE -- CMD`: REMAINDER took the option
            argv = argv[2:]
        argv = argv[1:] if argv[:1] == ["--"] else argv
        if not argv:
            parser.error("give the command after --, e.g. sglconsole run gpu1 -- nvidia-smi")
        cfg = config.load(config_path(args))
        cfg.host(args.host)
        return run_async(_run_remote(cfg, args.host, argv, args.timeout))

    return handle


async def _run_remote(cfg: config.Config, name: str, argv: list[str], timeout: float) -> int:
    fleet = SshFleet(cfg.hosts)
    try:
        result = await fleet[name].run(argv, timeout=timeout)
    finally:
        await fleet.close()
    sys.stdout.write(result.stdout)
    sys.stderr.write(result.stderr)
    return 124 if result.exit_status is None else result.exit_status
