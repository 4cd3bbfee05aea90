"""Promote a candidate that passed its canary: save it in hosts.yaml under its own name (the old
profile stays), and point the server's entry at it, both with the safe editor (every other byte
as written; both edits are written or neither, and the file stays valid)."""

from __future__ import annotations

from pathlib import Path

import yaml

from sglconsole import config as config_module
from sglconsole.config.edit import update_entries
from sglconsole.config.schema import Profile
from sglconsole.errors import ConfigError


def _valid(path: Path):
    return lambda text: config_module.parse(text, str(path))


def promote(path: Path, host: str, port: int, name: str, profile: Profile) -> None:
    written = profile.model_dump(mode="json", exclude_defaults=True)
    written["args"] = list(profile.args)  # the argv always, default or not
    raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    servers = raw["hosts"][host].get("servers") or []
    entry = next((server for server in servers if server.get("port") == port), None)
    if entry is None:
        raise ConfigError(f"{path}: {host} has no server entry on port {port} to point at {name}")
    entry["profile"] = name
    edits = [(("profiles",), name, written), (("hosts", host), "servers", servers)]
    update_entries(path, edits, _valid(path))  # both, or neither
