"""What a simulated SGLang version does with its environment, from the release's env table.

The tables in sglconsole/data/envs/ (read as data files: nothing is imported from the console)
were generated from each release's own sglang/srt/environ.py by tools/gen_env_table.py. The
simulator asks them whether a release reads a variable and what its default is, and writes the
registry into the simulated package (sglang/srt/environ.py, read on the host, never imported),
so the console reads a simulated host the way it reads a real one. Stdlib only: simulated
processes import this.
"""

from __future__ import annotations

import ast
import json
from functools import cache
from pathlib import Path

from sglconsole.sim.flagtable import version_tuple

ENVS_DIR = Path(__file__).parents[1] / "data" / "envs"
TRUE = ("true", "1", "yes", "y")  # EnvBool.parse


@cache
def load(version: str) -> dict | None:
    """The table of `version`, or of the newest release not newer than it (None: none older)."""
    tables = sorted(
        ENVS_DIR.glob("sglang-*.json"),
        key=lambda path: version_tuple(path.stem.removeprefix("sglang-")),
    )
    older = [
        path
        for path in tables
        if version_tuple(path.stem.removeprefix("sglang-")) <= version_tuple(version)
    ]
    return json.loads(older[-1].read_text()) if older else None


def enabled(version: str, env: dict, name: str) -> bool | None:
    """An EnvBool switch as `version` reads it: the env's value, else the registry's default;
    None when this release does not declare it (then it has no effect)."""
    table = load(version) or {}
    field = table.get("vars", {}).get(name)
    if field is None:
        return None
    value = env.get(name)
    if value is None:
        try:
            return bool(ast.literal_eval(field.get("default") or "None"))
        except (ValueError, SyntaxError):
            return False
    return str(value).lower() in TRUE


def number(version: str, env: dict, name: str) -> float | None:
    """An EnvInt or EnvFloat as `version` reads it: the env's value, else the registry's default;
    None when this release does not declare it or neither reads as a number."""
    field = (load(version) or {}).get("vars", {}).get(name)
    if field is None:
        return None
    try:
        value = env.get(name)
        return float(value if value is not None else ast.literal_eval(field.get("default") or ""))
    except (ValueError, SyntaxError, TypeError):
        return None


HARDCODED_KEEP_ALIVE_S = 5.0
"""uvicorn's timeout_keep_alive where the release has no SGLANG_TIMEOUT_KEEP_ALIVE (0.5.9's
http_server.py passes 5 itself)."""


def keep_alive_s(version: str, env: dict) -> float:
    """How long `version` keeps an idle connection open: SGLANG_TIMEOUT_KEEP_ALIVE (the env's, else
    the release's default), passed to uvicorn as timeout_keep_alive."""
    value = number(version, env, "SGLANG_TIMEOUT_KEEP_ALIVE")
    return HARDCODED_KEEP_ALIVE_S if value is None else value


def environ_source(version: str) -> str | None:
    """sglang/srt/environ.py for the simulated package: the registry's shape, as SGLang writes
    it, and the reads outside it (so a reader that parses the source finds the same facts)."""
    table = load(version)
    if table is None:
        return None
    lines = [
        f'"""SGLang {version}\'s environment registry, simulated from its env table (read, never',
        'imported)."""',
        "",
        "",
        "class Envs:",
    ]
    for name, field in sorted(table["vars"].items()):
        default = field.get("default") or "None"
        alias = field.get("deprecated_name")
        extra = f", deprecated_name={alias!r}" if alias else ""
        lines.append(f"    {name} = {field['kind']}({default}{extra})")
    lines += ["", "", "_DEPRECATED_ENVS = {"]
    for name, entry in sorted(table.get("deprecated", {}).items()):
        lines.append(
            f"    {name!r}: _DeprecatedEnv(replacement={entry.get('replacement')!r}, "
            f"note={entry.get('note')!r}),"
        )
    lines.append("}")
    if table.get("sgl_prefix_rewrite"):
        lines += ["", "", "def _rewrite(key):", '    return key.replace("SGL_", "SGLANG_", 1)']
    return "\n".join(lines) + "\n"


def elsewhere_source(version: str) -> str:
    """A module that reads, as the release's other modules do, the names outside its registry:
    those it reads only to warn that they are gone, in an `if` that only warns."""
    table = load(version) or {}
    warn_only = set(table.get("read_only_to_warn", {}))
    names = sorted(set(table.get("read_elsewhere", {})) - warn_only)
    body = "".join(f"    os.getenv({name!r})\n" for name in names)
    body += "".join(
        f"    if os.getenv({name!r}) is not None:\n"
        f"        warnings.warn({name + ' has been removed'!r})\n"
        for name in sorted(warn_only)
    )
    return (
        '"""The SGLANG_* variables this release reads outside its registry (simulated)."""\n\n'
        f"import os\nimport warnings\n\n\ndef _reads():\n{body or '    pass' + chr(10)}"
    )
