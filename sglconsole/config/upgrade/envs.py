"""A profile's environment carried to another release, judged by that release's env registry
(the shipped tables): kept where it reads the variable, renamed where it names a replacement,
dropped with the reason where it no longer reads it. Variables not SGLang's are kept as they are."""

from __future__ import annotations

from sglconsole.config.env_tables import shipped_registry
from sglconsole.config.upgrade.record import KEPT, REMOVED, RENAMED, Change
from sglconsole.core.env_registry import Effect, is_sglang, judge


def carry_env(env: dict[str, str], new: str) -> tuple[dict[str, str], list[Change], list[str]]:
    """(env, changes, notes) for release `new`."""
    registry = shipped_registry(new)
    out: dict[str, str] = {}
    changes: list[Change] = []
    notes: list[str] = []
    if registry is None and any(is_sglang(name) for name in env):
        notes.append(f"sglconsole ships no env table for SGLang {new}: variables kept unjudged")
    for name, value in env.items():
        entry = (f"{name}={value}",)
        if registry is None or not is_sglang(name):
            out[name] = value
            changes.append(Change(kind=KEPT, old=entry, new=entry, variable=True))
            continue
        verdict = judge(registry, name)
        if verdict.effect == Effect.DEPRECATED and verdict.target:
            out[verdict.target] = value
            renamed = (f"{verdict.target}={value}",)
            why = verdict.note or ""
            changes.append(Change(kind=RENAMED, old=entry, new=renamed, variable=True, reason=why))
        elif verdict.effect == Effect.NO_EFFECT:
            changes.append(
                Change(
                    kind=REMOVED,
                    old=entry,
                    variable=True,
                    reason=f"SGLang {new}: {verdict.note}",
                )
            )
        else:
            out[name] = value
            changes.append(
                Change(kind=KEPT, old=entry, new=entry, variable=True, reason=verdict.note or "")
            )
    return out, changes, notes
