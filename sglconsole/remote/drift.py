"""Build drift reports: fetch what is running, canonicalise both sides on the host, compare.

The profile's side is its LaunchSpec: the very argv and env a relaunch would start."""

from __future__ import annotations

from sglconsole.config import Config
from sglconsole.config.launch_spec import LaunchSpec, launch_spec
from sglconsole.core import drift
from sglconsole.core.processes import ServerProcess
from sglconsole.errors import ActionError
from sglconsole.remote.inspect import server_info, snapshot
from sglconsole.remote.parser_cache import ParserCache, canonicalize_cached
from sglconsole.remote.sglang_args import Verdict
from sglconsole.remote.ssh import SshHost


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


def drift_argvs(spec: LaunchSpec, process: ServerProcess) -> dict[str, list[str]]:
    """What the host's SGLang is asked to parse: the spec's arguments and the running ones."""
    return {"profile": spec.args, "running": list(process.args)}


async def compare_running(
    ssh: SshHost, spec: LaunchSpec, process: ServerProcess, cache: ParserCache
) -> tuple[drift.Report, Verdict]:
    """The host parser judges both sides (its verdict cached per SGLang version and argv, as
    status caches it: asking costs an import of SGLang, 12-14 s on a real host)."""
    python = process.python or spec.python
    verdict = await canonicalize_cached(cache, ssh, python, drift_argvs(spec, process))
    if not verdict.ok:
        raise ActionError(f"{ssh.name}: {verdict.error}")
    info = await server_info(ssh, spec.http_address, spec.port)
    return report_from(verdict, spec, process, info), verdict


def report_from(
    verdict: Verdict,
    spec: LaunchSpec,
    process: ServerProcess | None,
    info: dict | None,
) -> drift.Report:
    p, r = verdict.results["profile"], verdict.results["running"]
    report = drift.build(
        profile_values=p.values,
        profile_given=p.given,
        running_values=r.values,
        running_given=r.given,
        flag_of=verdict.flag_of,
        resolved=info,
        profile_env=dict(spec.env),
        running_env=(process.main.env or {}) if process else None,
        gpus=list(spec.gpus),
        version=(info or {}).get("version") or verdict.version,
        requires=spec.requires_sglang,
        server_port=spec.port,
    )
    report.errors = {k: v.error for k, v in verdict.results.items() if v.error}
    return report
