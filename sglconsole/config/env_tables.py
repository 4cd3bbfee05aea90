"""The SGLang environment tables shipped in sglconsole/data/envs/, read as package data.

One per release, generated from its own sglang/srt/environ.py by tools/gen_env_table.py. Only a
release's own table answers for it: a neighbour's registry is not this release's.
"""

from __future__ import annotations

import json
from importlib import resources

from sglconsole.core.env_registry import EnvRegistry


def _folder():
    return resources.files("sglconsole.data").joinpath("envs")


def load_env_table(version: str | None) -> dict | None:
    """The table of exactly `version` (None when sglconsole ships none for it)."""
    if not version:
        return None
    path = _folder().joinpath(f"sglang-{version}.json")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None


def shipped_registry(version: str | None) -> EnvRegistry | None:
    table = load_env_table(version)
    if table is None:
        return None
    return EnvRegistry.from_dict(
        table,
        version=version,
        source=f"SGLANG_* variables judged by the env table of SGLang {version} shipped with "
        "sglconsole",
    )
