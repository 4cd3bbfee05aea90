"""Profile vs running server, compared by meaning (pure).

Both sides arrive canonicalised by the host's own SGLang parser (dest ->
value, and which dests were given), so prefixes (--speculative-algo), aliases
(--tp / --tp-size) and defaults are already resolved. What SGLang chose for
flags left out (max_running_requests, context_length) comes from /server_info.
Port and GPU pinning belong to the server entry, not the profile.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from enum import StrEnum

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from sglconsole.core.long_values import cut_lengths, elide, elide_env
from sglconsole.core.secrets import mask_env, mask_value


class State(StrEnum):
    SAME = "SAME"
    DIFFERENT = "DIFFERENT"
    ONLY_PROFILE = "ONLY_PROFILE"
    ONLY_RUNNING = "ONLY_RUNNING"
    DEFAULTED_DIFFERENTLY = "DEFAULTED_DIFFERENTLY"

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
}


PERFORMANCE = re.compile(
    r"^(speculative_.*|tp_size|dp_size|pp_size|ep_size|mem_fraction_static|max_running_requests|context_length|"
    r"chunked_prefill_size|cuda_graph_.*|disable_cuda_graph.*|attention_backend|.*attention_backend|mamba_.*|"
    r"quantization|kv_cache_dtype|max_total_tokens|max_prefill_tokens|schedule_policy|enable_mixed_chunk|"
    r"enable_dp_attention|moe_.*|disable_radix_cache|num_continuous_decode_steps|SGLANG_.*)$"
)
# The environment is compared by what changes SGLang's behaviour: what the profile sets, the GPU
# pinning, SGLang's own SGLANG_* switches (minus the run id SGLang stamps), and these known tuning
# variables. Everything else a container image bakes in (NCCL_VERSION, CUDA_VERSION, NV_*,
# NVIDIA_*, ...) is ambient: shown apart, never drift, so the verdict does not depend on who
# started the server (README: Drift).
TUNING_ENV = frozenset(
    {
        "CUDA_VISIBLE_DEVICES",
        "CUDA_DEVICE_MAX_CONNECTIONS",
        "CUDA_LAUNCH_BLOCKING",
        "CUDA_MODULE_LOADING",
        "PYTORCH_CUDA_ALLOC_CONF",
        "NCCL_ALGO",
        "NCCL_PROTO",
        "NCCL_P2P_DISABLE",
        "NCCL_P2P_LEVEL",
        "NCCL_IB_DISABLE",
        "NCCL_IB_HCA",
        "NCCL_NET_GDR_LEVEL",
        "NCCL_SOCKET_IFNAME",
        "NCCL_NVLS_ENABLE",
        "NCCL_CUMEM_ENABLE",
        "NCCL_MIN_NCHANNELS",
        "NCCL_MAX_NCHANNELS",
        "NCCL_BUFFSIZE",
        "OMP_NUM_THREADS",
    }
)
TUNING_PREFIXES = ("SGLANG_",)
NOT_TUNING = frozenset({"SGLANG_RUN_ID"})
AMBIENT_PREFIXES = (
    "NCCL_",
    "CUDA_",
    "CUDNN_",
    "NV_",
    "NVIDIA_",
    "TORCH_",
    "TORCHINDUCTOR_",
    "PYTORCH_",
    "SGLANG_",
)
# What changes which kernels get built (the JIT of flashinfer, tvm-ffi, triton, torch extensions)
# and where the builds are cached: the same profile launched over SSH re-ran a 30 s JIT that a
# hand launch had cached (a real H200, 0.5.17). Shown as their own group, never as ambient, and
# drift only where the profile sets them (then they are compared like any variable it sets).
BUILD_ENV = (
    "TORCH_CUDA_ARCH_LIST",
    "FLASHINFER_CUDA_ARCH_LIST",
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDAHOSTCXX",
    "CC",
    "CXX",
    "MAX_JOBS",
    "NVCC_THREADS",
    "NVCC_APPEND_FLAGS",
    "NVCC_PREPEND_FLAGS",
    "FLASHINFER_WORKSPACE_BASE",
    "TVM_FFI_CACHE_DIR",
    "TRITON_CACHE_DIR",
    "TRITON_HOME",
    "TORCH_EXTENSIONS_DIR",
    "TORCHINDUCTOR_CACHE_DIR",
    "XDG_CACHE_HOME",
    "HOME",
)
"""Asked of the host by name (the process scan sends only the names it is asked for)."""
BUILD_PREFIXES = ("NVCC_", "FLASHINFER_", "TVM_FFI_")
SERVER_OWNED = {"port"}


@dataclass(frozen=True)
class Row:
    kind: str  # "flag" | "env" | "version"
    name: str  # dest or env var
    flag: str  # how a human spells it
    profile: object
    running: object
    resolved: object
    state: State
    performance: bool

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
        }


@dataclass
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

    @property
    def differences(self) -> list[Row]:
        return [r for r in self.rows if r.state != State.SAME]

    @property
    def differs(self) -> bool:
        return bool(self.differences) or self.version_ok is False

    @property
    def summary(self) -> str:
        diffs = self.differences
        if not diffs and self.version_ok is not False:
            return "matches the profile"
        parts = [
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
            "rows": [r.to_dict() for r in self.rows],
            "errors": self.errors,
            "ambient_env": elide_env(mask_env(self.ambient)),
            "build_env": elide_env(mask_env(self.build)),
            "cut_env": cut_lengths({**self.ambient, **self.build}),
        }

    def ambient_line(self) -> str | None:
        """The image's environment, named apart from the comparison (masked like the rest)."""
        return _env_line(
            "ambient environment (from the image or shell, not compared)", self.ambient
        )

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
    return f"{title}: " + ", ".join(f"{k}={v}" for k, v in elide_env(mask_env(env)).items())


def _compared_value(row: Row) -> object:
    """The value shown against the profile: the running one, or what SGLang resolved when unset."""
    return row.running if row.state != State.ONLY_PROFILE else row.resolved


def _short(value: object) -> str:
    text = "unset" if value is None else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def same(a: object, b: object) -> bool:
    if a == b:
        return True
    try:
        return float(a) == float(b)  # "0.88" and 0.88, 16 and 16.0
    except (TypeError, ValueError):
        return str(a) == str(b) if a is not None and b is not None else False


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
        if dest in SERVER_OWNED:
            p_value = server_port if server_port is not None else p_value
            state = State.SAME if same(p_value, r_value) else State.DIFFERENT
        elif dest in profile_given and dest in running_given:
            state = State.SAME if same(p_value, r_value) else State.DIFFERENT
        elif dest in profile_given:
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
                "flag",
                dest,
                flag_of(dest),
                p_value,
                r_value,
                r_resolved,
                state,
                bool(PERFORMANCE.match(dest)),
            )
        )
    return rows


def compare_env(
    profile_env: dict[str, str], running_env: dict[str, str], expected_gpus: list[int] | None
) -> list[Row]:
    expected = dict(profile_env)
    if expected_gpus:
        expected["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, expected_gpus))
    names = {n for n in set(expected) | set(running_env) if n in expected or is_tuning(n)}
    rows = []
    for name in sorted(names):
        p_value, r_value = expected.get(name), running_env.get(name)
        if name in expected and name in running_env:
            state = State.SAME if p_value == r_value else State.DIFFERENT
        elif name in expected:
            state = State.ONLY_PROFILE
        else:
            state = State.ONLY_RUNNING
        rows.append(
            Row("env", name, name, p_value, r_value, r_value, state, bool(PERFORMANCE.match(name)))
        )
    return rows


def is_tuning(name: str) -> bool:
    return name not in NOT_TUNING and (name in TUNING_ENV or name.startswith(TUNING_PREFIXES))


def is_build(name: str) -> bool:
    return name in BUILD_ENV or name.startswith(BUILD_PREFIXES)


def build_env(profile_env: dict[str, str], running_env: dict[str, str]) -> dict[str, str]:
    """The running server's build and JIT-cache variables that the profile leaves to the host."""
    return {
        name: value
        for name, value in sorted(running_env.items())
        if is_build(name) and name not in profile_env and not is_tuning(name)
    }


def ambient_env(profile_env: dict[str, str], running_env: dict[str, str]) -> dict[str, str]:
    """What the running server's environment holds from its image or shell that could look like
    tuning but is not compared (NCCL_VERSION, CUDA_VERSION, NV_*, ...)."""
    return {
        name: value
        for name, value in sorted(running_env.items())
        if name.startswith(AMBIENT_PREFIXES)
        and name not in profile_env
        and not is_tuning(name)
        and not is_build(name)
    }


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
        key=lambda r: (
            r.state == State.SAME,
            not r.performance,
            r.state != State.DIFFERENT,
            r.kind != "flag",
            r.name,
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
) -> Report:
    """The whole comparison; flag rows are kept when they differ or either side set them."""
    flags = compare_flags(
        profile_values, profile_given, running_values, running_given, resolved, flag_of, server_port
    )
    shown = [r for r in flags if r.state != State.SAME or r.name in profile_given | running_given]
    env = compare_env(profile_env or {}, running_env or {}, gpus) if running_env is not None else []
    report = Report(sort_rows(shown + env), version, requires, check_version(version, requires))
    report.ambient = ambient_env(profile_env or {}, running_env or {})
    report.build = build_env(profile_env or {}, running_env or {})
    return report


def did_you_mean(error: str, flags: list[str]) -> str | None:
    """For an unknown flag, the closest flag this SGLang version has (a rename, a typo)."""
    match = re.search(r"unrecognized arguments: (.+)", error)
    if not match:
        return None
    hints = []
    for unknown in match.group(1).split():
        if unknown.startswith("--"):
            close = difflib.get_close_matches(unknown.split("=")[0], flags, n=1, cutoff=0.6)
            if close:
                hints.append(f"{unknown}: did you mean {close[0]}?")
    return "; ".join(hints) or None
