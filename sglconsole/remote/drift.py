"""Build drift reports: fetch what is running, canonicalise both sides on the host, compare.

The profile's side is its LaunchSpec: the very argv and env a relaunch would start."""

from __future__ import annotations

from dataclasses import replace
from functools import cache

from sglconsole.config import Config
from sglconsole.config.env_tables import shipped_registry
from sglconsole.config.flag_tables import load_table
from sglconsole.config.launch_spec import LaunchSpec, launch_spec
from sglconsole.core import drift
from sglconsole.core.drift_container import ContainerRow, compare_container, running_side
from sglconsole.core.drift_meaning import Meaning, meaning_of
from sglconsole.core.env_registry import EnvRegistry
from sglconsole.core.processes import ServerProcess
from sglconsole.errors import ActionError, UsageError
from sglconsole.remote.container_engine import by_id, container_of_pid
from sglconsole.remote.inspect import server_info, snapshot
from sglconsole.remote.launch_argv import HostArgs, profile_args, running_args
from sglconsole.remote.parser_cache import ParserCache, canonicalize_cached, installed_version
from sglconsole.remote.sglang_args import Verdict
from sglconsole.remote.ssh.connection import SshHost


async def diff_server(
    cfg: Config, host: str, port: int, ssh: SshHost, cache: ParserCache | None = None
) -> tuple[drift.Report, ServerProcess | None, Verdict]:
    spec = launch_spec(cfg, host, port)
    profile = cfg.profiles[spec.profile]
    env_names = [*profile.env, *drift.BUILD_ENV]
    snap = await snapshot(ssh, cfg.host(host).python, env_names=env_names)
    process = snap.server(port)
    if process is None:
        raise ActionError(
            f"{host}:{port} is not running (nothing to compare; "
            f"`sglconsole relaunch {host}:{port}` starts it)"
        )
    report, verdict = await compare_running(ssh, spec, process, cache or ParserCache())
    return report, process, verdict


async def drift_argvs(
    ssh: SshHost, spec: LaunchSpec, process: ServerProcess, version: str | None
) -> tuple[dict[str, list[str]], list[str]]:
    """What the host's SGLang is asked to parse: the spec's arguments and the running ones, each
    as SGLang's parser gets them (`sglang serve MODEL`'s positional as --model-path, a --config
    file read from the host and expanded), and notes on where values came from. ActionError when
    a side cannot be known (an unreadable --config file is unknown, never "same")."""
    running = await running_args(ssh, process.main.argv, version, process.main.cwd)
    profile = await profile_args(ssh, spec.args, version, spec.cwd)
    sides: dict[str, HostArgs] = {"profile": profile, "running": running}
    for name, side in sides.items():
        if side.error:
            raise ActionError(f"{side.error} ({name} side)")
    notes = [f"{name}: {side.note}" for name, side in sides.items() if side.note]
    return {name: side.args for name, side in sides.items()}, notes


async def compare_running(
    ssh: SshHost, spec: LaunchSpec, process: ServerProcess, cache: ParserCache
) -> tuple[drift.Report, Verdict]:
    """The host parser judges both sides (its verdict cached per SGLang version and argv, as
    status caches it: asking costs an import of SGLang, 12-14 s on a real host)."""
    python = process.python or spec.python
    version = await installed_version(ssh, python)
    argvs, notes = await drift_argvs(ssh, spec, process, version)
    verdict = await canonicalize_cached(cache, ssh, python, argvs, version=version)
    if not verdict.ok:
        raise ActionError(f"{ssh.name}: {verdict.error}")
    info = await server_info(ssh, spec.http_address, spec.port)
    report = report_from(verdict, spec, process, info, notes)
    rows = await container_rows(ssh, spec, process, (info or {}).get("version") or version)
    return replace(report, container=rows), verdict


async def container_rows(
    ssh: SshHost, spec: LaunchSpec, process: ServerProcess, version: str | None
) -> list[ContainerRow]:
    """The container's side of the drift, where either side runs in one (the process's cgroup
    names its container: the engine is asked about that one)."""
    found = await container_of_pid(ssh, process.main.pid)
    running = None
    if found is not None:
        boxed = await by_id(ssh, *found)
        running = running_side(boxed, version) if boxed is not None else None
    profile = spec.container.side() if spec.container is not None else None
    return compare_container(profile, running)


def report_from(
    verdict: Verdict,
    spec: LaunchSpec,
    process: ServerProcess | None,
    info: dict | None,
    notes: list[str] | None = None,
) -> drift.Report:
    profile, running = verdict.results["profile"], verdict.results["running"]
    version = (info or {}).get("version") or verdict.version
    registry, judge = env_registry(verdict, version)
    report = drift.build(
        profile_values=profile.values,
        profile_given=profile.given,
        running_values=running.values,
        running_given=running.given,
        flag_of=verdict.flag_of,
        resolved=info,
        profile_env=dict(spec.env),
        running_env=(process.main.env or {}) if process else None,
        gpus=[] if spec.container else list(spec.gpus),  # a container's: its GPU option
        version=version,
        requires=spec.requires_sglang,
        server_port=spec.port,
        meaning=release_meaning(verdict.version),
        defaults={dest: action.get("default") for dest, action in verdict.actions.items()},
        env_registry=registry,
        env_judge=judge,
    )
    errors = {side: result.error for side, result in verdict.results.items() if result.error}
    return replace(report, errors=errors, notes=list(notes or ()))


@cache
def release_meaning(version: str | None) -> Meaning:
    """What the shipped flag table of the host's release says of equivalent spellings (its
    deprecation actions, where flags fold into /server_info); none without a table."""
    if not version:
        return Meaning()
    try:
        return meaning_of(load_table(version))
    except UsageError:
        return Meaning()


def env_registry(verdict: Verdict, version: str | None) -> tuple[EnvRegistry | None, str]:
    """The registry that judges SGLANG_* variables: the host's own source as the parser check read
    it, else the table shipped for that version, else none (then compared by value, as before)."""
    host = verdict.env_registry
    if host is not None and host.get("vars") and verdict.version == version:
        source = (
            f"SGLANG_* variables judged by {host.get('path') or 'sglang/srt/environ.py'} "
            f"(SGLang {version} on the host)"
        )
        return EnvRegistry.from_dict(host, version=version, source=source), source
    shipped = shipped_registry(version)
    if shipped is not None:
        return shipped, shipped.source
    return None, (
        f"no environment registry for SGLang {version or 'of unknown version'} "
        "(host source unreadable, no table shipped): SGLANG_* variables compared by value"
    )
