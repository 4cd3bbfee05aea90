"""Build drift reports: fetch what is running, canonicalise both sides on the host, compare."""

from __future__ import annotations

from sglconsole.config import Config, Profile, Server
from sglconsole.config.launch_spec import profile_argv, resolve_env
from sglconsole.core import drift
from sglconsole.core.processes import ServerProcess
from sglconsole.errors import ActionError
from sglconsole.remote.inspect import server_info, snapshot
from sglconsole.remote.sglang_args import Verdict, canonicalize_remote
from sglconsole.remote.ssh import SshHost


async def diff_server(
    cfg: Config, host: str, port: int, ssh: SshHost
) -> tuple[drift.Report, ServerProcess | None, Verdict]:
    server = cfg.server(host, port)
    profile = cfg.profiles[server.profile]
    snap = await snapshot(ssh, cfg.host(host).python, env_names=list(profile.env))
    process = snap.server(port)
    if process is None:
        raise ActionError(
            f"{host}:{port} is not running (nothing to compare; `sglconsole relaunch {host}:{port}` starts it)"
        )
    report, verdict = await compare_running(ssh, server, profile, process)
    return report, process, verdict


async def compare_running(
    ssh: SshHost, server: Server, profile: Profile, process: ServerProcess
) -> tuple[drift.Report, Verdict]:
    python = process.python or profile.python
    verdict = await canonicalize_remote(
        ssh, python, {"profile": profile_argv(profile, server), "running": list(process.args)}
    )
    if not verdict.ok:
        raise ActionError(f"{ssh.name}: {verdict.error}")
    info = await server_info(ssh, server.http_address, server.port)
    return report_from(verdict, profile, server, process, info), verdict


def report_from(
    verdict: Verdict,
    profile: Profile,
    server: Server,
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
        profile_env=resolve_env(profile.env),
        running_env=(process.main.env or {}) if process else None,
        gpus=list(server.gpus),
        version=(info or {}).get("version") or verdict.version,
        requires=profile.requires_sglang,
        server_port=server.port,
    )
    report.errors = {k: v.error for k, v in verdict.results.items() if v.error}
    return report
