"""Profile vs running server, compared by meaning (pure).

Both sides arrive canonicalised by the host's own SGLang parser (dest ->
value, and which dests were given), so prefixes (--speculative-algo), aliases
(--tp / --tp-size) and defaults are already resolved. What SGLang chose for
flags left out (max_running_requests, context_length) comes from /server_info.
Port and GPU pinning belong to the server entry, not the profile.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from sglconsole.core.drift_container import ContainerRow
from sglconsole.core.drift_env import (  # noqa: F401 - BUILD_ENV, is_tuning: drift's face
    BUILD_ENV,
    ambient_env,
    build_env,
    is_build,
    is_tuning,
)
from sglconsole.core.drift_meaning import JUDGES, Meaning, judge, resolved_view, translate
from sglconsole.core.env_registry import (
    Effect,
    EnvRegistry,
    is_sglang,
    same_as_default,
    same_value,
)
from sglconsole.core.env_registry import judge as judge_env
from sglconsole.core.long_values import cut_lengths, elide, elide_env
from sglconsole.core.secrets import mask_env, mask_value


class State(StrEnum):
    SAME = "SAME"
    DIFFERENT = "DIFFERENT"
    ONLY_PROFILE = "ONLY_PROFILE"
    ONLY_RUNNING = "ONLY_RUNNING"
    DEFAULTED_DIFFERENTLY = "DEFAULTED_DIFFERENTLY"
    NO_EFFECT = "NO_EFFECT"  # differs in a variable the host's SGLang does not read: not drift

    @property
    def label(self) -> str:
        """In words, for people (the value stays the JSON's)."""
        return _LABELS[self]


_LABELS = {
    State.SAME: "same",
    State.DIFFERENT: "differs",
    State.ONLY_PROFILE: "profile only",
    State.ONLY_RUNNING: "running only",
    State.DEFAULTED_DIFFERENTLY: "default differs",
    State.NO_EFFECT: "no effect here",
}
QUIET = (State.SAME, State.NO_EFFECT)
"""States that are not a difference from the profile."""


PERFORMANCE = re.compile(
    r"^(speculative_.*|tp_size|dp_size|pp_size|ep_size|mem_fraction_static|max_running_requests|context_length|"
    r"chunked_prefill_size|cuda_graph_.*|disable_cuda_graph.*|attention_backend|.*attention_backend|mamba_.*|"
    r"quantization|kv_cache_dtype|max_total_tokens|max_prefill_tokens|schedule_policy|enable_mixed_chunk|"
    r"enable_dp_attention|moe_.*|disable_radix_cache|num_continuous_decode_steps|SGLANG_.*)$"
)
SERVER_OWNED = {"port"}


@dataclass(frozen=True, kw_only=True)
class Row:
    kind: str  # "flag" | "env" | "version"
    name: str  # dest or env var
    flag: str  # how a human spells it
    profile: object
    running: object
    resolved: object
    state: State
    performance: bool
    judged: str = "parser"  # which source judged: a key of drift_meaning.JUDGES
    meaning: str = ""  # how a deprecated spelling was read
    note: str | None = None
    """What the host's SGLang does with it, when that is not plain (env: by its registry)."""

    def shown(self, value: object) -> object:
        return mask_value(self.name, value, env=self.kind == "env")

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "dest": self.name,
            "flag": self.flag,
            "profile": elide(self.shown(self.profile)),
            "running": elide(self.shown(self.running)),
            "resolved": elide(self.shown(self.resolved)),
            "state": self.state.value,
            "performance": self.performance,
            "judged_by": JUDGES[self.judged],
            "meaning": self.meaning or None,
            "note": self.note,
        }


@dataclass(frozen=True, kw_only=True)
class Report:
    rows: list[Row] = field(default_factory=list)
    version: str | None = None
    requires: str | None = None
    version_ok: bool | None = None
    errors: dict[str, str] = field(default_factory=dict)
    ambient: dict[str, str] = field(default_factory=dict)
    """Environment from the image or shell, shown apart and never counted as drift."""
    build: dict[str, str] = field(default_factory=dict)
    """Build and JIT-cache variables the profile does not set: shown as their own group, not
    drift (BUILD_ENV)."""
    notes: list[str] = field(default_factory=list)  # values from beyond the argv (--config)
    env_judge: str | None = None
    """Who judged the SGLANG_* variables: the host's registry, a shipped table, or nothing."""
    container: list[ContainerRow] = field(default_factory=list)
    """The image and `run` options, apart from SGLang's flags (drift_container)."""

    @property
    def differences(self) -> list[Row]:
        return [row for row in self.rows if row.state not in QUIET]

    @property
    def count(self) -> int:
        """Differences in all: SGLang's flags and env, and the container's."""
        return len(self.differences) + sum(row.differs for row in self.container)

    @property
    def differs(self) -> bool:
        changed = any(row.differs for row in self.container)
        return bool(self.differences) or self.version_ok is False or changed

    @property
    def summary(self) -> str:
        diffs = self.differences
        if not self.differs:
            return "matches the profile"
        boxed = [f"{row.label}: {row.running} (profile {row.profile})" for row in self.container]
        parts = [text for text, row in zip(boxed, self.container, strict=True) if row.differs] + [
            f"{row.flag}: {_short(row.shown(_compared_value(row)))} "
            f"(profile {_short(row.shown(row.profile))})"
            for row in diffs[:3]
        ]
        more = f" and {len(diffs) - 3} more" if len(diffs) > 3 else ""
        if self.version_ok is False:
            parts.insert(0, f"sglang {self.version} does not satisfy {self.requires}")
        return "; ".join(parts) + more

    def to_dict(self) -> dict:
        return {
            "version": self.version,
            "requires_sglang": self.requires,
            "version_ok": self.version_ok,
            "differs": self.differs,
            "rows": [row.to_dict() for row in self.rows],
            "errors": self.errors,
            "ambient_env": elide_env(mask_env(self.ambient)),
            "build_env": elide_env(mask_env(self.build)),
            "cut_env": cut_lengths({**self.ambient, **self.build}),
            "notes": list(self.notes),
            "env_judge": self.env_judge,
            "container": [row.to_dict() for row in self.container],
        }

    def ambient_line(self) -> str | None:
        """The image's environment, named apart from the comparison (masked like the rest)."""
        return _env_line(
            "ambient environment (from the image or shell, not compared)", self.ambient
        )

    def note_lines(self) -> list[str]:
        """What the host's SGLang does with the variables compared, where it is worth saying."""
        lines = [f"${row.name}: {row.note}" for row in self.rows if row.note]
        return ([self.env_judge] if self.env_judge and lines else []) + lines

    def build_line(self) -> str | None:
        """The build environment, its own group: it decides which kernels a start JIT-builds."""
        return _env_line(
            "build environment (decides which kernels are built and where they are cached; "
            "compared only where the profile sets it)",
            self.build,
        )


def _env_line(title: str, env: dict[str, str]) -> str | None:
    if not env:
        return None
    return f"{title}: " + ", ".join(
        f"{name}={value}" for name, value in elide_env(mask_env(env)).items()
    )


def _compared_value(row: Row) -> object:
    """The value shown against the profile: the running one, or what SGLang resolved when unset."""
    return row.running if row.state != State.ONLY_PROFILE else row.resolved


def _short(value: object) -> str:
    text = "unset" if value is None else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def same(left: object, right: object) -> bool:
    if left == right:
        return True
    try:
        return float(left) == float(right)  # "0.88" and 0.88, 16 and 16.0
    except (TypeError, ValueError):
        return str(left) == str(right) if left is not None and right is not None else False


def compare_flags(
    profile: dict[str, object],
    profile_given: set[str],
    running: dict[str, object],
    running_given: set[str],
    resolved: dict | None,
    flag_of,
    server_port: int | None = None,
) -> list[Row]:
    rows = []
    for dest in sorted(set(profile) | set(running)):
        p_value, r_value = profile.get(dest), running.get(dest)
        r_resolved = (resolved or {}).get(dest, r_value)
        judged = "parser"
        if dest in SERVER_OWNED:
            p_value = server_port if server_port is not None else p_value
            state = State.SAME if same(p_value, r_value) else State.DIFFERENT
        elif dest in profile_given and dest in running_given:
            state = State.SAME if same(p_value, r_value) else State.DIFFERENT
        elif dest in profile_given:
            judged = "server_info" if resolved and dest in resolved else "parser"
            if same(p_value, r_resolved if resolved and dest in resolved else r_value):
                state = State.SAME
            else:
                state = (
                    State.DEFAULTED_DIFFERENTLY
                    if resolved and dest in resolved
                    else State.ONLY_PROFILE
                )
        elif dest in running_given:
            state = State.SAME if same(p_value, r_value) else State.ONLY_RUNNING
        else:
            state = State.SAME
        rows.append(
            Row(
                kind="flag",
                name=dest,
                flag=flag_of(dest),
                profile=p_value,
                running=r_value,
                resolved=r_resolved,
                state=state,
                performance=bool(PERFORMANCE.match(dest)),
                judged=judged,
            )
        )
    return rows


def compare_env(
    profile_env: dict[str, str],
    running_env: dict[str, str],
    expected_gpus: list[int] | None,
    registry: EnvRegistry | None = None,
) -> list[Row]:
    """Each variable the profile sets or that tunes SGLang; an SGLANG_* one judged by the host
    release's registry when there is one (not read there: no effect, never drift)."""
    expected = dict(profile_env)
    if expected_gpus:
        expected["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, expected_gpus))
    names = {
        name for name in set(expected) | set(running_env) if name in expected or is_tuning(name)
    }
    rows = []
    for name in sorted(names):
        p_value, r_value = expected.get(name), running_env.get(name)
        if name in expected and name in running_env:
            state = State.SAME if p_value == r_value else State.DIFFERENT
        elif name in expected:
            state = State.ONLY_PROFILE
        else:
            state = State.ONLY_RUNNING
        note = None
        if registry is not None and is_sglang(name):
            state, note = _by_registry(registry, name, p_value, r_value, state)
        rows.append(
            Row(
                kind="env",
                name=name,
                flag=name,
                profile=p_value,
                running=r_value,
                resolved=r_value,
                state=state,
                performance=bool(PERFORMANCE.match(name)),
                note=note,
            )
        )
    return rows


def _by_registry(
    registry: EnvRegistry, name: str, p_value: str | None, r_value: str | None, state: State
) -> tuple[State, str | None]:
    judgement = judge_env(registry, name)
    if judgement.effect == Effect.NO_EFFECT:
        return (State.SAME if state == State.SAME else State.NO_EFFECT), judgement.note
    if state == State.DIFFERENT and same_value(registry, name, p_value or "", r_value or ""):
        why = f"the same value to SGLang {registry.version}"
        return State.SAME, "; ".join(filter(None, [judgement.note, why]))
    if state in (State.ONLY_PROFILE, State.ONLY_RUNNING):
        default = same_as_default(registry, name, p_value if r_value is None else r_value)
        if default is not None:
            unset = "unset" if r_value is None else "unset in the profile"
            why = f"{unset} means the same: SGLang {registry.version}'s default is {default!r}"
            return State.SAME, "; ".join(filter(None, [judgement.note, why]))
    return state, judgement.note


def check_version(version: str | None, requires: str | None) -> bool | None:
    if not version or not requires:
        return None
    try:
        return Version(version) in SpecifierSet(requires)
    except (InvalidVersion, InvalidSpecifier):
        return None


def sort_rows(rows: list[Row]) -> list[Row]:
    """Differences first, performance-relevant ones first among them; env after flags."""
    return sorted(
        rows,
        key=lambda row: (
            row.state in QUIET,
            not row.performance,
            row.state != State.DIFFERENT,
            row.kind != "flag",
            row.name,
        ),
    )


def build(
    *,
    profile_values: dict,
    profile_given: set[str],
    running_values: dict,
    running_given: set[str],
    flag_of,
    resolved: dict | None = None,
    profile_env: dict[str, str] | None = None,
    running_env: dict[str, str] | None = None,
    gpus: list[int] | None = None,
    version: str | None = None,
    requires: str | None = None,
    server_port: int | None = None,
    meaning: Meaning | None = None,
    defaults: dict | None = None,
    env_registry: EnvRegistry | None = None,
    env_judge: str | None = None,
) -> Report:
    """The whole comparison; flag rows are kept when they differ or either side set them.
    `meaning` reads deprecated spellings in their replacements' terms (drift_meaning);
    `env_registry` judges SGLANG_* variables by what the release reads (env_registry)."""
    meaning, was_given = meaning or Meaning(), profile_given | running_given
    p_values, p_given, notes = translate(profile_values, profile_given, meaning, defaults or {})
    r_values, r_given, r_notes = translate(running_values, running_given, meaning, defaults or {})
    notes.update(r_notes)
    view = resolved_view(resolved, meaning)
    flags = compare_flags(p_values, p_given, r_values, r_given, view, flag_of, server_port)
    flags = judge(flags, notes, view, same, (profile_values, running_values))
    shown = [
        row for row in flags if row.state != State.SAME or row.name in was_given | p_given | r_given
    ]
    env = (
        compare_env(profile_env or {}, running_env or {}, gpus, env_registry)
        if running_env is not None
        else []
    )
    return Report(
        rows=sort_rows(shown + env),
        version=version,
        requires=requires,
        version_ok=check_version(version, requires),
        ambient=ambient_env(profile_env or {}, running_env or {}),
        build=build_env(profile_env or {}, running_env or {}),
        env_judge=env_judge or (env_registry.source if env_registry else None),
    )
