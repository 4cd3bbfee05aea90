"""The translated profile as a candidate: the old profile's settings with the translation's argv
and env, VERSION's interpreter, and its provenance (from which profile, which SGLang, when) in
its description and `requires_sglang`. The console's config with the candidate added (in memory)
is what the canary runs with."""

from __future__ import annotations

import time

from sglconsole.config.schema import Config, Profile
from sglconsole.config.upgrade import Translation


def candidate_name(cfg: Config, old: str, version: str) -> str:
    """`qwen-next-mtp-sglang-0.5.11` (a free name: `-2`, `-3`, ... when taken)."""
    name = f"{old}-sglang-{version}"
    taken, number = set(cfg.profiles), 2
    chosen = name
    while chosen in taken:
        chosen, number = f"{name}-{number}", number + 1
    return chosen


def provenance(old_name: str, translation: Translation) -> str:
    return (
        f"{old_name} translated from SGLang {translation.from_version} to "
        f"{translation.to_version} by sglconsole upgrade ({time.strftime('%Y-%m-%d')})"
    )


def candidate(old: Profile, old_name: str, translation: Translation, python: str) -> Profile:
    return old.model_copy(
        update={
            "python": python,
            "args": list(translation.new_args),
            "env": dict(translation.new_env),
            "requires_sglang": f"=={translation.to_version}",
            "description": provenance(old_name, translation),
        }
    )


def with_profile(cfg: Config, name: str, profile: Profile, host: str, port: int) -> Config:
    """`cfg` with profile `name` added, HOST:PORT's entry on it (in memory: hosts.yaml is
    changed only on promote): every step of the canary (preflight, probe) judges the candidate."""
    entry = cfg.host(host)
    servers = [
        server.model_copy(update={"profile": name}) if server.port == port else server
        for server in entry.servers
    ]
    hosts = {**cfg.hosts, host: entry.model_copy(update={"servers": servers})}
    profiles = {**cfg.profiles, name: profile}
    return Config(
        cfg.model.model_copy(update={"profiles": profiles, "hosts": hosts}), cfg.path, cfg.lines
    )
