"""The one answer to "what does this server launch?": a LaunchSpec, built once per action.

Preflight checks it, the plan and --dry-run show it, the launch starts it, drift and
bench compare take it as the profile's side. ${VAR} is resolved from the operator's
environment once, when the spec is built, so every step sees the same values.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from sglconsole.config.container_run import ContainerRun, container_run
from sglconsole.config.schema import Config, Profile, Server
from sglconsole.core.launch_form import parser_args
from sglconsole.core.secrets import mask_argv, mask_env

_VAR = re.compile(r"\$\{(\w+)\}")
MODULE = "sglang.launch_server"


def default_log(port: int) -> str:
    """Where a server without a configured log writes (the launcher redirects its output here)."""
    return f"/tmp/sglang-{port}.log"


@dataclass(frozen=True)
class LaunchSpec:
    """Exactly what one launch starts, and where."""

    host: str
    port: int
    argv: tuple[str, ...]
    """The whole command: interpreter, -m sglang.launch_server, the arguments, --port."""
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """Set on top of the launcher's environment (or, with exact_env, the whole environment)."""
    cwd: str | None = None
    log_setting: str | None = None
    """The server entry's `log:`; None when the launch writes to default_log(port)."""
    launcher: str = "nohup"
    gpus: tuple[int, ...] = ()
    profile: str | None = None
    """The profile's name; None for a rollback's saved command."""
    requires_sglang: str | None = None
    startup_timeout: float = 900
    http_address: str = "127.0.0.1"
    unresolved: tuple[str, ...] = ()
    """${VAR} references the operator's environment did not set when the spec was built."""
    exact_env: bool = False
    """A rollback restores the saved environment as it was, not on top of the launcher's."""
    container: ContainerRun | None = None
    """It runs in a container: `argv` is the command inside, `command` the `run` that starts it."""

    @property
    def python(self) -> str:
        return self.argv[0]

    @property
    def args(self) -> list[str]:
        """The SGLang arguments alone: what the host's argument parser is asked about (a saved
        `sglang serve MODEL` with its model as --model-path, as `sglang serve` hands it on)."""
        return list(parser_args(self.argv).args)

    @property
    def log(self) -> str:
        return self.log_setting or default_log(self.port)

    @property
    def systemd_unit(self) -> str | None:
        return self.launcher.split(":", 1)[1] if self.launcher.startswith("systemd:") else None

    @property
    def runner(self) -> list[str]:
        """The argv that runs the spec's interpreter where the server will run (`-c` follows)."""
        return [self.python] if self.container is None else self.container.runner(self.python)

    @property
    def command(self) -> list[str]:
        """What the host runs to start it: the argv, or the container's `run -d`."""
        if self.container is None:
            return list(self.argv)
        return self.container.argv(self.port, self.argv)

    def shown(self) -> str:
        """The command as a shell would read it, secrets masked."""
        if self.container is not None:
            return shlex.join(self.container.argv(self.port, self.argv, masked=True))
        env = " ".join(
            f"{name}={shlex.quote(value)}" for name, value in mask_env(dict(self.env)).items()
        )
        return f"{env} {shlex.join(mask_argv(list(self.argv)))}".strip()


def launch_spec(
    config: Config,
    host: str,
    port: int,
    profile: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> LaunchSpec:
    """The spec of HOST:PORT's server launched with PROFILE (default: its own profile)."""
    server = config.server(host, port)
    name = profile or server.profile
    return spec_for_profile(host, server, name, config.profiles[name], environ)


def spec_for_profile(
    host: str,
    server: Server,
    name: str,
    profile: Profile,
    environ: Mapping[str, str] | None = None,
) -> LaunchSpec:
    """What this server entry launches with this profile: --port from the server entry unless the
    profile sets it, CUDA_VISIBLE_DEVICES from its gpus, ${VAR} from the operator's environment
    (secrets stay out of hosts.yaml)."""
    environ = dict(os.environ if environ is None else environ)  # read once: one answer
    # an unset ${VAR} stays visible in an argument (the parser names it) and is empty in env
    args = [
        _VAR.sub(lambda found: environ.get(found.group(1), found.group(0)), arg)
        for arg in profile.args
    ]
    if "--port" not in args and not any(arg.startswith("--port=") for arg in args):
        args += ["--port", str(server.port)]
    given = {**profile.env, **(profile.container.options.env if profile.container else {})}
    env = {
        name: _VAR.sub(lambda found: environ.get(found.group(1), ""), value)
        for name, value in given.items()
    }
    container = None
    if profile.container is not None:  # its GPU option pins the GPUs, numbered from 0 inside
        container = container_run(
            profile.container, server.port, env, tuple(server.gpus), profile.workdir
        )
    elif server.gpus:
        env["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, server.gpus))
    return LaunchSpec(
        host=host,
        port=server.port,
        argv=(profile.python, "-m", MODULE, *args),
        env=MappingProxyType(env),
        cwd=profile.workdir,
        log_setting=server.log,
        launcher=server.launcher,
        gpus=tuple(server.gpus),
        profile=name,
        requires_sglang=profile.requires_sglang,
        startup_timeout=profile.startup_timeout,
        http_address=server.http_address,
        unresolved=_unresolved(profile, environ),
        container=container,
    )


def spec_from_rollback(host: str, saved: dict, server: Server | None) -> LaunchSpec:
    """Exactly what ran before (saved by a kill, relaunch or restore): its argv, env and cwd."""
    return LaunchSpec(
        host=host,
        port=int(saved["port"]),
        argv=tuple(saved["argv"]),
        env=MappingProxyType(dict(saved.get("env") or {})),
        cwd=saved.get("cwd"),
        log_setting=saved.get("log") or (server.log if server else None),
        launcher=server.launcher if server else "nohup",
        gpus=tuple(saved.get("gpus") or (server.gpus if server else ())),
        http_address=server.http_address if server else "127.0.0.1",
        exact_env=True,
    )


def _unresolved(profile: Profile, environ: Mapping[str, str]) -> tuple[str, ...]:
    options = profile.container.options if profile.container else None
    names = {
        found.group(1)
        for text in [
            *profile.args,
            *profile.env.values(),
            *(options.env.values() if options else ()),
        ]
        for found in _VAR.finditer(text)
    }
    return tuple(sorted(name for name in names if name not in environ))
