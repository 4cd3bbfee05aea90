"""The SGLang flag tables shipped in sglconsole/data/flags/, read as package data.

One table per release (tools/add_sglang_release.sh adds the next). Which one judges a
version: its own (``X.postN``: X's); a version newer than the newest table: the newest,
with a one-line note the caller shows; older than the oldest, or not a version: an error.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from importlib import resources

from sglconsole.core.flag_table import version_key
from sglconsole.errors import UsageError

_RELEASE = re.compile(r"v?(\d+(?:\.\d+)*)(?:\.?post\d+)?")


@dataclass(frozen=True)
class TablePick:
    """The table that judges `asked` (None: the newest), and the line to show about it."""

    asked: str | None
    version: str
    note: str | None


def _folder():
    return resources.files("sglconsole.data").joinpath("flags")


def available_versions() -> list[str]:
    names = [path.name for path in _folder().iterdir() if path.name.startswith("sglang-")]
    versions = [name.removeprefix("sglang-").removesuffix(".json") for name in names]
    return sorted(versions, key=version_key)


def release_of(version: str) -> str:
    """`0.5.12.post1` -> `0.5.12`; a string that is no release number is a UsageError."""
    match = _RELEASE.fullmatch(version.strip())
    if not match:
        raise UsageError(f"not an SGLang version: {version!r} (e.g. 0.5.17 or 0.5.17.post1)")
    return match[1]


def pick(version: str | None) -> TablePick:
    """Which shipped table judges SGLang `version` (see the module docstring)."""
    versions = available_versions()
    newest = versions[-1]
    if version is None:
        return TablePick(None, newest, None)
    release = release_of(version)
    if release in versions:
        return TablePick(version, release, None)
    key = version_key(release)
    if key > version_key(newest):
        note = f"SGLang {version} is newer than the newest table ({newest}): judged with {newest}'s"
        return TablePick(version, newest, note)
    older = [release for release in versions if version_key(release) <= key]
    if not older:
        raise UsageError(
            f"no SGLang flag table for {version} or older: SGLang {version} is older than"
            f" the oldest table ({versions[0]}) (have: {', '.join(versions)})"
        )
    note = f"SGLang {version} has no table of its own: judged with {older[-1]}'s"
    return TablePick(version, older[-1], note)


def read(version: str) -> dict:
    """The table of exactly `version` (one of available_versions())."""
    return json.loads(_folder().joinpath(f"sglang-{version}.json").read_text(encoding="utf-8"))


def load_table(version: str | None = None) -> dict:
    """The table that judges `version` (None: the newest); pick() says which and why."""
    return read(pick(version).version)
