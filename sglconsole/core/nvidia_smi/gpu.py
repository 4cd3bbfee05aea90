"""``nvidia-smi --query-gpu`` lines as ``GpuSample``s (pure, stdlib only).

``--format=csv`` prints a header whose names differ from the names asked for
(``clocks.sm`` -> ``clocks.current.sm [MHz]``), so GPU lines are mapped by
*position* against the field list that was asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sglconsole.core.nvidia_smi.values import (
    BadValue,
    split_csv,
    to_float,
    to_int,
    to_mask,
    to_pstate,
    to_str,
)

__all__ = [
    "GPU_QUERY_FIELDS",
    "THROTTLE_REASONS",
    "GpuSample",
    "gpu_query_args",
    "parse_gpu_csv",
    "parse_gpu_line",
    "throttle_reason_names",
]

#: The fields the console asks ``--query-gpu`` for, in this order.
GPU_QUERY_FIELDS: tuple[str, ...] = (
    "index",
    "uuid",
    "name",
    "pci.bus_id",
    "driver_version",
    "utilization.gpu",
    "utilization.memory",
    "memory.used",
    "memory.total",
    "memory.free",
    "temperature.gpu",
    "power.draw",
    "power.limit",
    "clocks.sm",
    "clocks.mem",
    "fan.speed",
    "pstate",
    "mig.mode.current",
    "ecc.errors.uncorrected.volatile.total",
    "clocks_throttle_reasons.active",
)

#: clocks_event_reasons (formerly clocks_throttle_reasons) bits, as NVML defines them.
THROTTLE_REASONS: tuple[tuple[int, str], ...] = (
    (0x1, "gpu_idle"),
    (0x2, "applications_clocks_setting"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"),
)


def gpu_query_args(
    fields: Iterable[str] = GPU_QUERY_FIELDS, *, loop_ms: int | None = None
) -> list[str]:
    """argv (without the program) for a headerless, unitless GPU query."""
    args = [f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"]
    if loop_ms is not None:
        args += ["-lms", str(int(loop_ms))]
    return args


def throttle_reason_names(mask: int | None) -> list[str]:
    """Decode a clocks_event_reasons bitmask into names (unknown bits -> ``0x...``)."""
    if not isinstance(mask, int) or isinstance(mask, bool) or mask <= 0:
        return []
    names: list[str] = []
    known = 0
    for bit, name in THROTTLE_REASONS:
        known |= bit
        if mask & bit:
            names.append(name)
    rest = mask & ~known
    if rest:
        names.append(f"0x{rest:x}")
    return names


@dataclass(frozen=True, slots=True)
class GpuSample:
    """One GPU's line of ``--query-gpu`` output. Unavailable values are None."""

    index: int
    uuid: str | None = None
    name: str | None = None
    bus_id: str | None = None
    driver: str | None = None
    util_gpu: int | None = None
    util_mem: int | None = None
    mem_used_mib: int | None = None
    mem_total_mib: int | None = None
    mem_free_mib: int | None = None
    temperature_c: int | None = None
    power_draw_w: float | None = None
    power_limit_w: float | None = None
    clock_sm_mhz: int | None = None
    clock_mem_mhz: int | None = None
    fan_pct: int | None = None
    pstate: str | None = None
    mig_mode: str | None = None
    ecc_uncorrected: int | None = None
    throttle_reasons: int | None = None

    @property
    def throttle_names(self) -> list[str]:
        return throttle_reason_names(self.throttle_reasons)


# query field (and its aliases) -> (GpuSample attribute, converter)
_GPU_FIELD_MAP: dict[str, tuple[str, Callable[[str], object]]] = {}


def _register(attr: str, convert: Callable[[str], object], *names: str) -> None:
    for name in names:
        _GPU_FIELD_MAP[name] = (attr, convert)


_register("index", to_int, "index")
_register("uuid", to_str, "uuid", "gpu_uuid")
_register("name", to_str, "name", "gpu_name")
_register("bus_id", to_str, "pci.bus_id", "gpu_bus_id")
_register("driver", to_str, "driver_version")
_register("util_gpu", to_int, "utilization.gpu")
_register("util_mem", to_int, "utilization.memory")
_register("mem_used_mib", to_int, "memory.used")
_register("mem_total_mib", to_int, "memory.total")
_register("mem_free_mib", to_int, "memory.free")
_register("temperature_c", to_int, "temperature.gpu")
_register("power_draw_w", to_float, "power.draw", "power.draw.average", "power.draw.instant")
_register("power_limit_w", to_float, "power.limit", "enforced.power.limit")
_register("clock_sm_mhz", to_int, "clocks.sm", "clocks.current.sm")
_register("clock_mem_mhz", to_int, "clocks.mem", "clocks.current.memory", "clocks.memory")
_register("fan_pct", to_int, "fan.speed")
_register("pstate", to_pstate, "pstate")
_register("mig_mode", to_str, "mig.mode.current")
_register("ecc_uncorrected", to_int, "ecc.errors.uncorrected.volatile.total")
_register(
    "throttle_reasons",
    to_mask,
    "clocks_throttle_reasons.active",
    "clocks_event_reasons.active",
    "clock_throttle_reasons.active",
)


def parse_gpu_line(line: str, fields: Iterable[str] = GPU_QUERY_FIELDS) -> GpuSample | None:
    """Parse one ``--query-gpu`` line (noheader; with or without units).

    Columns are mapped by position onto ``fields``. Returns None for a header,
    a blank line, a line with the wrong number of columns or any value that is
    neither a number nor a not-available marker where a number is expected.
    Fields that GpuSample does not know are ignored. If ``index`` is not among
    the fields the sample's index is -1.
    """
    try:
        return _parse_gpu_line(line, tuple(fields))
    except Exception:  # noqa: BLE001 - fuzz-safe by contract
        return None


def _parse_gpu_line(line: str, fields: tuple[str, ...]) -> GpuSample | None:
    if not isinstance(line, str):
        return None
    line = line.strip().lstrip("\ufeff")
    if not line or not fields:
        return None
    cols = split_csv(line)
    if len(cols) != len(fields):
        return None
    values: dict[str, object] = {}
    for field, raw in zip(fields, cols, strict=True):
        spec = _GPU_FIELD_MAP.get(field.strip())
        if spec is None:
            continue
        attr, convert = spec
        try:
            values[attr] = convert(raw)
        except BadValue:
            return None
    if "index" in values:
        if values["index"] is None or values["index"] < 0:  # type: ignore[operator]
            return None
    else:
        values["index"] = -1
    uuid = values.get("uuid")
    if isinstance(uuid, str) and not uuid.startswith(("GPU-", "MIG-")):
        return None
    return GpuSample(**values)  # type: ignore[arg-type]


def parse_gpu_csv(text: str, fields: Iterable[str] = GPU_QUERY_FIELDS) -> list[GpuSample]:
    """Parse a whole ``--query-gpu`` output; a header line (if any) and junk are skipped."""
    if not isinstance(text, str):
        return []
    fields = tuple(fields)
    out = []
    for line in text.splitlines():
        sample = parse_gpu_line(line, fields)
        if sample is not None:
            out.append(sample)
    return out
