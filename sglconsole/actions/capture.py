"""Capture: turn what runs (a server, or a systemd unit's command) into a profile in hosts.yaml.

The profile gets the interpreter, the argv, the SGLang-relevant environment
and the working directory; from a running server also a baseline measured
from its recent decode lines, with provenance. Secret values are never
written: they become ${NAME} references resolved from the operator's
environment at launch. Existing profiles are replaced only with --force,
and the edit keeps every other byte of hosts.yaml.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from sglconsole import config as config_module
from sglconsole.actions.base import ActionContext, ActionResult, StageFailed
from sglconsole.actions.capture_container import container_block, container_env, container_of
from sglconsole.actions.restore import aged, decode_stats
from sglconsole.config.edit import update_file
from sglconsole.core.processes import launch_args
from sglconsole.core.secrets import is_secret_env, is_secret_flag
from sglconsole.core.systemd_unit import parse_unit
from sglconsole.remote.inspect import server_info, snapshot
from sglconsole.remote.launch_argv import HostArgs, running_args
from sglconsole.remote.parser_cache import installed_version
from sglconsole.remote.ssh.connection import SshHost

UNIT_DIRS = (
    "/etc/systemd/system",
    "/run/systemd/system",
    "/lib/systemd/system",
    "/usr/lib/systemd/system",
)
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
SERVER_OWNED_ENV = {"CUDA_VISIBLE_DEVICES"}


def _check_name(ctx: ActionContext, name: str, force: bool) -> Path:
    if not NAME.match(name):
        raise StageFailed(
            f"profile names may use letters, digits, '.', '_' and '-' only, got {name!r}"
        )
    if name in ctx.config.profiles and not force:
        raise StageFailed(
            f"profile {name!r} already exists in {ctx.config.path}; use --force to replace it"
        )
    if ctx.config.path is None:
        raise StageFailed("no hosts.yaml to write the profile into")
    return Path(ctx.config.path)


def _without_secrets_env(env: dict[str, str], boxed: bool = False) -> dict[str, str]:
    """BOXED: in a container, where CUDA_VISIBLE_DEVICES was given with -e (the GPU option pins
    the GPUs), it is the profile's."""
    return {
        name: (f"${{{name}}}" if is_secret_env(name) else value)
        for name, value in env.items()
        if boxed or name not in SERVER_OWNED_ENV
    }


def _without_port(args: list[str]) -> list[str]:
    """The port belongs to the server entry (a launch adds it): a profile that named one could
    not be reused on another port (hosts.yaml would refuse it)."""
    out, skip = [], False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--port":
            skip = True
        elif not arg.startswith("--port="):
            out.append(arg)
    return out


def _without_secret_args(args: list[str]) -> list[str]:
    out, hide = [], None
    for arg in args:
        if hide:
            out.append(f"${{{hide}}}")
            hide = None
        elif arg.startswith("--") and is_secret_flag(arg):
            flag, sep, _ = arg.partition("=")
            variable = "SGLANG_" + flag.lstrip("-").replace("-", "_").upper()
            if sep:
                out.append(f"{flag}=${{{variable}}}")
            else:
                out.append(arg)
                hide = variable
        else:
            out.append(arg)
    return out


async def _launched(
    ssh: SshHost, python: str | list[str], argv: tuple[str, ...], cwd: str | None
) -> HostArgs:
    """The arguments as SGLang's parser got them, which a profile (always launched as
    `python -m sglang.launch_server ARGS`) must hold to start the same server: `sglang serve
    MODEL` as `--model-path MODEL` (accepted by every release, where the positional needs 0.5.16
    and `sglang serve` itself 0.5.10), a --config file's keys expanded in SGLang's merge order
    (a profile that only named the file would start whatever the file says on the day)."""
    launched = await running_args(ssh, argv, await installed_version(ssh, python), cwd)
    if launched.error:
        raise StageFailed(f"cannot capture: {launched.error}")
    return launched


def _from_file(launched: HostArgs) -> str:
    return (
        f"; the keys of --config {launched.config_file} as read then"
        if launched.config_file
        else ""
    )


def _write(ctx: ActionContext, path: Path, name: str, profile: dict) -> None:
    update_file(
        path,
        ("profiles",),
        name,
        profile,
        validate=lambda text: config_module.parse(text, str(path)),
    )


async def capture(
    ctx: ActionContext, host: str, port: int, name: str, *, force: bool = False
) -> ActionResult:
    path = _check_name(ctx, name, force)
    ssh = ctx.ssh[host]
    async with ctx.stage("inspect", f"the server on {host}:{port}") as stage:
        snap = await snapshot(ssh, ctx.config.host(host).python)
        process = snap.server(port)
        if process is None:
            raise StageFailed(f"nothing runs on {host}:{port} to capture")
        stage.detail = f"pid {process.main.pid}"
    configured = ctx.config.find_server(host, port)
    log = (configured.log if configured else None) or process.main.stdout
    async with ctx.stage("measure", "baseline from its recent decode lines") as stage:
        main = process.main
        stats = await decode_stats(ssh, log, main.pid, main.start) if log else None
        speed, accept = (stats.tok_s, stats.accept_len) if stats else (None, None)
        running = round(stats.running) if stats and stats.running else None
        info = await server_info(ssh, configured.http_address if configured else "127.0.0.1", port)
        stage.detail = (
            f"{speed:.1f} tok/s at {running} running{aged(stats)}"
            if speed
            else f"pid {main.pid} has written no busy decode line: no baseline"
        )
    boxed = await container_of(ssh, process.main.pid)  # its cgroup names its container
    inside = [boxed[0].engine, "exec", boxed[0].id, process.python] if boxed else process.python
    launched = await _launched(ssh, inside, process.main.argv, process.main.cwd)
    within = f" in {boxed[0].engine} container {boxed[0].name}" if boxed else ""
    profile: dict = {
        "description": f"captured from {host}:{port} (pid {process.main.pid}{within})"
        f" on {time.strftime('%Y-%m-%d')}{_from_file(launched)}",
        "python": process.python,
        "args": _without_secret_args(_without_port(launched.args)),
    }
    env = _without_secrets_env(process.main.env or {}, boxed=bool(boxed))
    env = container_env(env) if boxed else env
    if env:
        profile["env"] = env
    if process.main.cwd and not (boxed and process.main.cwd == "/"):
        profile["workdir"] = process.main.cwd
    if boxed:
        profile["container"] = container_block(*boxed)
    if speed:
        gpu = snap.gpus[0].name if snap.gpus else None
        profile["baseline"] = {
            key: value
            for key, value in {
                "gen_throughput": round(speed, 1),
                # a figure means nothing without the load it was measured under
                "concurrency": running,
                "accept_len": round(accept, 2) if accept else None,
                "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "sglang_version": (info or {}).get("version"),
                "gpu_model": gpu,
                "gpu_count": len(process.gpus) or None,
            }.items()
            if value is not None
        }
    async with ctx.stage("write", f"profiles.{name} in {path}"):
        if not ctx.dry_run:
            _write(ctx, path, name, profile)
    hint = (
        ""
        if configured
        else f"; add a server entry (port: {port}, profile: {name}, gpus: {list(process.gpus)})"
        f" to hosts.{host}.servers"
    )
    return ctx.result(
        "capture",
        f"{host}:{port}",
        True,
        f"profile {name!r} written to {path}{hint}",
        profile=profile,
    )


async def unit_text(ssh: SshHost, unit: str) -> str:
    shown = await ssh.run(["systemctl", "cat", "--no-pager", unit], timeout=30)
    if shown.ok and shown.stdout.strip():
        return shown.stdout
    for folder in UNIT_DIRS:
        found = await ssh.run(["cat", f"{folder}/{unit}"], timeout=15)
        if found.ok:
            return found.stdout
    user = await ssh.run(
        ["sh", "-c", 'cat "$HOME/.config/systemd/user/$1"', "sh", unit], timeout=15
    )
    if user.ok:
        return user.stdout
    places = ", ".join([*UNIT_DIRS, "~/.config/systemd/user"])
    raise StageFailed(f"unit {unit} not found (systemctl cat failed and it is not in {places})")


async def capture_unit(
    ctx: ActionContext, host: str, unit: str, name: str, *, force: bool = False
) -> ActionResult:
    path = _check_name(ctx, name, force)
    ssh = ctx.ssh[host]
    async with ctx.stage("read", f"unit {unit} on {host}") as stage:
        text = await unit_text(ssh, unit)
        files = {}
        for line in text.splitlines():
            if line.strip().startswith("EnvironmentFile="):
                file_path = line.split("=", 1)[1].strip().lstrip("-")
                result = await ssh.run(["cat", file_path], timeout=15)
                files[file_path] = result.stdout if result.ok else ""
        try:
            command = parse_unit(text, files)
        except ValueError as exc:
            raise StageFailed(f"{unit}: {exc}") from None
        stage.detail = f"{len(command.argv)} words, {len(command.env)} env vars"
    args = list(launch_args(tuple(command.argv)))
    if not args:
        raise StageFailed(
            f"{unit}'s ExecStart does not run sglang.launch_server: {' '.join(command.argv[:4])}"
        )
    python = command.argv[0]
    if os.path.basename(python) == "sglang":  # `sglang serve`: the interpreter next to the script
        python = os.path.join(os.path.dirname(python), "python3")
    launched = await _launched(ssh, python, tuple(command.argv), command.workdir)
    profile: dict = {
        "description": f"captured from systemd unit {unit} on {host} ({time.strftime('%Y-%m-%d')})"
        f"{_from_file(launched)}",
        "python": python,
        "args": _without_secret_args(_without_port(launched.args)),
    }
    env = _without_secrets_env(command.env)
    if env:
        profile["env"] = env
    if command.workdir:
        profile["workdir"] = command.workdir
    async with ctx.stage("write", f"profiles.{name} in {path}"):
        if not ctx.dry_run:
            _write(ctx, path, name, profile)
    return ctx.result(
        "capture", f"{host}:{unit}", True, f"profile {name!r} written to {path}", profile=profile
    )
