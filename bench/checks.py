"""What a bench script promises to measure, and the proof it did, before anything is written.

Every bench script declares PROMISES: each key it writes (a dotted path into what it measured),
with the path of the count that proves the value was measured (samples taken, a ratio's
denominator), or None where the value is its own proof. Before the measurement starts it asks
for the hooks it needs (`require_hooks`); before saving, `save` checks every promise. A broken
promise prints one line, `FAILED: <script>: <key>: <why>`, on stderr, exits 1, and writes
nothing: a figure that silently stopped being measured is worse than no figure.

Keys and sample paths may name the script's settings, `{hosts}_hosts`: `fields` fills them.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Iterable, Mapping
from dataclasses import fields as dataclass_fields
from dataclasses import is_dataclass
from pathlib import Path
from typing import NoReturn

from bench import results_file

Promises = Mapping[str, str | None]
"""Key written -> the count that must be above 0 for it to count as measured (None: none)."""

MISSING = object()


def fail(script: str, key: str, why: str) -> NoReturn:
    print(f"FAILED: {script}: {key}: {why}", file=sys.stderr, flush=True)
    raise SystemExit(1)


def lookup(measured: Mapping, path: str) -> object:
    """The value at a dotted path (`freshness.2_hosts.n`), or MISSING."""
    value: object = measured
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return MISSING
        value = value[part]
    return value


def problems(measured: Mapping, promises: Promises, fields: Mapping | None = None) -> list:
    """(key, why) for each promise MEASURED does not keep, in PROMISES' order."""
    found = []
    for template, samples_template in promises.items():
        key = template.format(**(fields or {}))
        value = lookup(measured, key)
        if value is MISSING:
            found.append((key, "not measured (the key is missing)"))
            continue
        if samples_template is not None:
            samples = samples_template.format(**(fields or {}))
            count = lookup(measured, samples)
            if count is MISSING or count is None:
                said = "missing" if count is MISSING else "null"
                found.append((key, f"no samples ({samples} is {said})"))
                continue
            if not isinstance(count, int | float) or count <= 0:
                found.append((key, f"no samples ({samples} = {count!r})"))
                continue
        if value is None:
            found.append((key, "null (asked to measure it, it was not measured)"))
    return found


def save(
    script: str,
    path: Path,
    measured: dict,
    promises: Promises,
    fields: Mapping | None = None,
) -> dict:
    """MEASURED merged into PATH (the other keys stay) once every promise is kept; else FAILED
    and nothing written."""
    check(script, measured, promises, fields)
    return results_file.merge(path, measured)


def check(script: str, measured: Mapping, promises: Promises, fields: Mapping | None = None):
    """Every broken promise said, one line each, then exit 1."""
    broken = problems(measured, promises, fields)
    for key, why in broken:
        print(f"FAILED: {script}: {key}: {why}", file=sys.stderr, flush=True)
    if broken:
        raise SystemExit(1)


def resolve(hook: str) -> object:
    """`package.module:Class.attribute` -> the object, or MISSING. A dataclass field with a
    factory default is no class attribute: its declaration counts."""
    module_name, _, attributes = hook.partition(":")
    try:
        value: object = importlib.import_module(module_name)
    except ImportError:
        return MISSING
    for name in attributes.split(".") if attributes else ():
        owner, value = value, getattr(value, name, MISSING)
        declared = is_dataclass(owner) and name in {field.name for field in dataclass_fields(owner)}
        if value is MISSING and declared:
            value = owner  # a field: instances have it
        if value is MISSING:
            return MISSING
    return value


def require_hooks(script: str, hooks: Iterable[str]) -> None:
    """Before measuring: every interface the measure hooks onto exists, or FAILED (one line)."""
    for hook in hooks:
        if resolve(hook) is MISSING:
            fail(script, f"hook {hook}", "missing: the measure would see nothing, not measured")


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    """NUMERATOR / DENOMINATOR, None without a denominator (its promise names it: FAILED)."""
    if numerator is None or not denominator:
        return None
    return numerator / denominator


def parse(parser: argparse.ArgumentParser, smallest: Mapping, argv=None) -> argparse.Namespace:
    """The arguments, with `--smallest` (settings that run in seconds, for the smoke test and a
    first try) added; flags given explicitly still win over it."""
    sizes = " ".join(f"{name}={value}" for name, value in smallest.items())
    parser.add_argument("--smallest", action="store_true", help=f"seconds, not minutes: {sizes}")
    args = parser.parse_args(argv)
    if args.smallest:
        parser.set_defaults(**smallest)
        args = parser.parse_args(argv)
    return args
