"""The SGLang flag tables shipped in sglconsole/data/flags/, read as package data."""

from __future__ import annotations

import json
from importlib import resources

from sglconsole.core.flag_table import version_key
from sglconsole.errors import UsageError


def _folder():
    return resources.files("sglconsole.data").joinpath("flags")


def available_versions() -> list[str]:
    names = [p.name for p in _folder().iterdir() if p.name.startswith("sglang-")]
    versions = [n.removeprefix("sglang-").removesuffix(".json") for n in names]
    return sorted(versions, key=version_key)


def load_table(version: str | None = None) -> dict:
    """The table of `version` (or of the newest version not newer than it; None: the newest)."""
    versions = available_versions()
    if version is None:
        chosen = versions[-1]
    else:
        older = [v for v in versions if version_key(v) <= version_key(version)]
        if not older:
            raise UsageError(
                f"no SGLang flag table for {version} or older (have: {', '.join(versions)})"
            )
        chosen = older[-1]
    return json.loads(_folder().joinpath(f"sglang-{chosen}.json").read_text(encoding="utf-8"))
