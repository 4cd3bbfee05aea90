"""What one SGLang release does with an environment variable, by its own registry (pure).

The registry is that release's `Envs` (sglang/srt/environ.py: name, kind, default as source
text, deprecated aliases), its deprecation list, whether it rewrites SGL_X to SGLANG_X, and the
SGLANG_* names it reads outside the registry. It is read on the host from the installed source
(remote/agents/env_registry_reader.py), else taken from the table shipped for that version
(tools/gen_env_table.py -> sglconsole/data/envs/). The rule it serves: a variable the release
does not read has no effect there, so a difference in it is not drift; and a variable unset on
one side and set to the registry's default on the other means the same.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from enum import StrEnum

SGLANG_PREFIXES = ("SGLANG_", "SGL_")
TRUE = ("true", "1", "yes", "y")  # EnvBool.parse of SGLang 0.5.9..0.5.23
FALSE = ("false", "0", "no", "n")


class Effect(StrEnum):
    KNOWN = "known"  # a field of the registry (or its deprecated alias)
    ELSEWHERE = "read_elsewhere"  # read by the package outside the registry
    DEPRECATED = "deprecated"  # forwarded to its replacement
    NO_EFFECT = "no_effect"  # this release does not read it


@dataclass(frozen=True, kw_only=True)
class EnvRegistry:
    version: str | None
    source: str
    """Who judged, in words: the host's source file, or the table shipped with sglconsole."""
    variables: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    """name -> (kind, default as source text)"""
    aliases: dict[str, str] = field(default_factory=dict)
    deprecated: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    """name -> (replacement, note)"""
    read_elsewhere: dict[str, tuple[str, ...]] = field(default_factory=dict)
    read_only_to_warn: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Of read_elsewhere, those read only to warn that they are gone: they change nothing."""
    sgl_rewrite: bool = False

    @classmethod
    def from_dict(cls, data: dict, *, version: str | None, source: str) -> EnvRegistry:
        """From the host reader's answer (lists) or a shipped table (dicts)."""

        def pair(value, first: str, second: str) -> tuple:
            if isinstance(value, dict):
                return (value.get(first), value.get(second))
            return tuple(value)

        return cls(
            version=version,
            source=source,
            variables={
                name: pair(entry, "kind", "default") for name, entry in data["vars"].items()
            },
            aliases=dict(data.get("aliases") or {}),
            deprecated={
                name: pair(entry, "replacement", "note")
                for name, entry in (data.get("deprecated") or {}).items()
            },
            read_elsewhere={
                name: tuple(readers) for name, readers in (data.get("read_elsewhere") or {}).items()
            },
            read_only_to_warn={
                name: tuple(readers)
                for name, readers in (data.get("read_only_to_warn") or {}).items()
            },
            sgl_rewrite=bool(data.get("sgl_prefix_rewrite")),
        )


@dataclass(frozen=True)
class Judgement:
    effect: Effect
    note: str | None
    target: str | None = None
    """The registry variable that decides (the name itself, an alias's field, SGL_'s SGLANG_)."""


def is_sglang(name: str) -> bool:
    return name.startswith(SGLANG_PREFIXES)


def judge(registry: EnvRegistry, name: str) -> Judgement:
    """What this release does with `name` (an SGLANG_*/SGL_* variable)."""
    release = f"SGLang {registry.version or '?'}"
    if name in registry.variables:
        return Judgement(Effect.KNOWN, None, name)
    if name in registry.aliases:
        target = registry.aliases[name]
        return Judgement(Effect.KNOWN, f"deprecated in {release}: read as {target}", target)
    if name in registry.deprecated:
        replacement, note = registry.deprecated[name]
        if replacement:
            text = f"deprecated in {release}: it sets {replacement}"
            text += f" ({note})" if note else ""
            return Judgement(Effect.DEPRECATED, text, replacement)
        why = f"deprecated in {release}" + (f": {note}" if note else "")
        if name in registry.read_elsewhere and name not in registry.read_only_to_warn:
            return Judgement(Effect.ELSEWHERE, why, name)
        return Judgement(Effect.NO_EFFECT, f"no effect here ({why})")
    if name in registry.read_only_to_warn:
        where = registry.read_only_to_warn[name][0]
        return Judgement(
            Effect.NO_EFFECT,
            f"no effect here ({release} reads it only to warn it is gone: {where})",
        )
    if name in registry.read_elsewhere:
        where = registry.read_elsewhere[name][0]
        return Judgement(Effect.ELSEWHERE, f"read outside {release}'s registry ({where})", name)
    if registry.sgl_rewrite and name.startswith("SGL_"):
        renamed = "SGLANG_" + name.removeprefix("SGL_")
        inner = judge(registry, renamed)
        if inner.effect != Effect.NO_EFFECT:
            return Judgement(inner.effect, f"{release} reads it as {renamed}", inner.target)
    return Judgement(Effect.NO_EFFECT, f"no effect here ({release} does not read it)")


def default_of(registry: EnvRegistry, name: str) -> tuple[bool, object]:
    """(known, value): the registry's default for `name` as a value, when it is a literal."""
    kind, text = registry.variables.get(name, (None, None))
    if text is None:
        return False, None
    try:
        return True, ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return False, None  # computed at import (a call): unknown here


def parsed(kind: str | None, value: str) -> tuple[bool, object]:
    """(ok, value): `value` read as SGLang's field of `kind` reads it."""
    kind = (kind or "").removesuffix("WithAlias")
    try:
        if kind == "EnvBool":
            lowered = value.lower()
            if lowered in TRUE or lowered in FALSE:
                return True, lowered in TRUE
            return False, None
        if kind == "EnvInt":
            return True, int(value)
        if kind == "EnvFloat":
            return True, float(value)
        if kind == "EnvStr":
            return True, value
        if kind == "EnvTuple":
            return True, tuple(item.strip() for item in value.split(",") if item.strip())
    except ValueError:
        return False, None
    return False, None


def same_as_default(registry: EnvRegistry, name: str, value: str) -> object | None:
    """The default `value` equals (as the field reads it), or None when it differs or is unknown."""
    target = judge(registry, name).target
    if target is None or target not in registry.variables:
        return None
    known, default = default_of(registry, target)
    valid, read = parsed(registry.variables[target][0], value)
    if known and valid and default is not None and read == default:
        return default
    return None


def same_value(registry: EnvRegistry, name: str, first: str, second: str) -> bool:
    """Two spellings the field reads as one value ("1" and "true" for an EnvBool)."""
    target = judge(registry, name).target
    kind = registry.variables.get(target or "", (None, None))[0]
    ok_first, value_first = parsed(kind, first)
    ok_second, value_second = parsed(kind, second)
    return ok_first and ok_second and value_first == value_second
