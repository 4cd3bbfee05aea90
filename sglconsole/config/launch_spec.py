"""What a (profile, server) pair launches: argv with the server's port, env with ${VAR} resolved."""

from __future__ import annotations

import os
import re

from sglconsole.config.schema import Profile, Server

_VAR = re.compile(r"\$\{(\w+)\}")


def resolve_env(env: dict[str, str], environ: dict[str, str] | None = None) -> dict[str, str]:
    """${VAR} in profile values, from the operator's environment (at launch, never stored)."""
    environ = os.environ if environ is None else environ
    return {k: _VAR.sub(lambda m: environ.get(m.group(1), ""), v) for k, v in env.items()}


def unresolved(profile: Profile, environ: dict[str, str] | None = None) -> list[str]:
    """${VAR} references in the profile that the operator's environment does not set."""
    environ = os.environ if environ is None else environ
    names = {
        m.group(1) for text in [*profile.args, *profile.env.values()] for m in _VAR.finditer(text)
    }
    return sorted(n for n in names if n not in environ)


def profile_argv(profile: Profile, server: Server) -> list[str]:
    """The profile's arguments as this server launches them: --port comes from the server entry,
    ${VAR} from the operator's environment (secrets stay out of hosts.yaml)."""
    args = [_VAR.sub(lambda m: os.environ.get(m.group(1), m.group(0)), a) for a in profile.args]
    if "--port" not in args and not any(a.startswith("--port=") for a in args):
        args += ["--port", str(server.port)]
    return args
