"""Pure parsing of ``nvidia-smi`` output (no I/O, stdlib only).

Everything here takes text that ``nvidia-smi`` printed and returns plain data.
Nothing raises on arbitrary input: unparseable lines become ``None`` / are
skipped (and counted, for the stream assembler).

Facts this module relies on (see tests/fixtures/nvidia-smi/h200/README.md):

* ``--format=csv`` prints a header whose names differ from the names asked for
  (``clocks.sm`` -> ``clocks.current.sm [MHz]``), so GPU lines are mapped by
  *position* against the field list that was asked for.
* Values that a GPU cannot report read ``[N/A]``, ``[Not Supported]``,
  ``[Unknown Error]``... (any bracketed word), sometimes ``N/A``: all -> None.
* Without ``nounits`` values carry units: ``99 %``, ``21491 MiB``, ``695.96 W``,
  ``1485 MHz``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "GPU_QUERY_FIELDS",
    "COMPUTE_APPS_FIELDS",
    "THROTTLE_REASONS",
    "GpuSample",
    "ComputeApp",
    "GpuStreamAssembler",
    "throttle_reason_names",
    "parse_gpu_line",
    "parse_gpu_csv",
    "parse_compute_apps",
    "classify_nvidia_smi_error",
    "gpu_query_args",
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

#: The fields the console asks ``--query-compute-apps`` for.
COMPUTE_APPS_FIELDS: tuple[str, ...] = ("pid", "process_name", "used_memory", "gpu_uuid")

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


# --------------------------------------------------------------------------- values

_NUM_RE = re.compile(r"^([-+]?\d+(?:\.\d+)?)\s*(%|MiB|MB|GiB|W|MHz|C|KB/s)?$")


class _Bad(Exception):
    """A value that is neither a number nor a not-available marker: garbage."""


def _is_na(v: str) -> bool:
    return (
        v == ""
        or (v.startswith("[") and v.endswith("]"))
        or v in ("N/A", "Not Supported", "Unknown Error", "Not Available")
    )


def _num(v: str) -> float | None:
    if _is_na(v):
        return None
    m = _NUM_RE.match(v)
    if m is None:
        raise _Bad(v)
    return float(m.group(1))


def _int(v: str) -> int | None:
    f = _num(v)
    if f is None:
        return None
    if f != f or f in (float("inf"), float("-inf")):  # pragma: no cover - regex forbids
        raise _Bad(v)
    return int(round(f))


def _float(v: str) -> float | None:
    return _num(v)


def _str(v: str) -> str | None:
    return None if _is_na(v) else v


def _hex(v: str) -> int | None:
    if _is_na(v):
        return None
    try:
        if v[:2].lower() == "0x":
            return int(v[2:], 16)
        return int(v, 10)
    except ValueError:
        raise _Bad(v) from None


_PSTATE_RE = re.compile(r"^P\d{1,2}$")


def _pstate(v: str) -> str | None:
    if _is_na(v):
        return None
    if not _PSTATE_RE.match(v):
        raise _Bad(v)
    return v


# --------------------------------------------------------------------------- GPU lines


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
_GPU_FIELD_MAP: dict[str, tuple[str, object]] = {}


def _reg(attr: str, conv: object, *names: str) -> None:
    for n in names:
        _GPU_FIELD_MAP[n] = (attr, conv)


_reg("index", _int, "index")
_reg("uuid", _str, "uuid", "gpu_uuid")
_reg("name", _str, "name", "gpu_name")
_reg("bus_id", _str, "pci.bus_id", "gpu_bus_id")
_reg("driver", _str, "driver_version")
_reg("util_gpu", _int, "utilization.gpu")
_reg("util_mem", _int, "utilization.memory")
_reg("mem_used_mib", _int, "memory.used")
_reg("mem_total_mib", _int, "memory.total")
_reg("mem_free_mib", _int, "memory.free")
_reg("temperature_c", _int, "temperature.gpu")
_reg("power_draw_w", _float, "power.draw", "power.draw.average", "power.draw.instant")
_reg("power_limit_w", _float, "power.limit", "enforced.power.limit")
_reg("clock_sm_mhz", _int, "clocks.sm", "clocks.current.sm")
_reg("clock_mem_mhz", _int, "clocks.mem", "clocks.current.memory", "clocks.memory")
_reg("fan_pct", _int, "fan.speed")
_reg("pstate", _pstate, "pstate")
_reg("mig_mode", _str, "mig.mode.current")
_reg("ecc_uncorrected", _int, "ecc.errors.uncorrected.volatile.total")
_reg(
    "throttle_reasons",
    _hex,
    "clocks_throttle_reasons.active",
    "clocks_event_reasons.active",
    "clock_throttle_reasons.active",
)


def _split_csv(line: str) -> list[str]:
    return [c.strip() for c in line.split(",")]


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
    cols = _split_csv(line)
    if len(cols) != len(fields):
        return None
    values: dict[str, object] = {}
    for field, raw in zip(fields, cols, strict=True):
        spec = _GPU_FIELD_MAP.get(field.strip())
        if spec is None:
            continue
        attr, conv = spec
        try:
            values[attr] = conv(raw)  # type: ignore[operator]
        except _Bad:
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
        s = parse_gpu_line(line, fields)
        if s is not None:
            out.append(s)
    return out


# --------------------------------------------------------------------------- compute apps


@dataclass(frozen=True, slots=True)
class ComputeApp:
    """One line of ``--query-compute-apps``."""

    pid: int
    process_name: str
    used_mib: int | None
    gpu_uuid: str | None
    gpu_bus_id: str | None = None


_APP_ATTR = {
    "pid": "pid",
    "process_name": "process_name",
    "name": "process_name",
    "used_memory": "used_mib",
    "used_gpu_memory": "used_mib",
    "gpu_uuid": "gpu_uuid",
    "uuid": "gpu_uuid",
    "gpu_bus_id": "gpu_bus_id",
    "pci.bus_id": "gpu_bus_id",
}


def _header_name(col: str) -> str:
    return col.split("[", 1)[0].strip()


def parse_compute_apps(text: str, fields: Iterable[str] = COMPUTE_APPS_FIELDS) -> list[ComputeApp]:
    """Parse ``--query-compute-apps`` output, with or without header/units.

    With a header the columns are mapped by the header names (so extra columns
    such as ``gpu_bus_id`` are understood); without, by position on ``fields``.
    A header alone (no GPU processes) gives ``[]``.
    """
    try:
        return _parse_compute_apps(text, tuple(fields))
    except Exception:  # noqa: BLE001 - fuzz-safe by contract
        return []


def _parse_compute_apps(text: str, fields: tuple[str, ...]) -> list[ComputeApp]:
    if not isinstance(text, str):
        return []
    cols_attr = [_APP_ATTR.get(f.strip()) for f in fields]
    out: list[ComputeApp] = []
    for raw in text.splitlines():
        line = raw.strip().lstrip("\ufeff")
        if not line:
            continue
        cols = _split_csv(line)
        if cols and cols[0] == "pid":  # header: map by its names from now on
            cols_attr = [_APP_ATTR.get(_header_name(c)) for c in cols]
            continue
        app = _app_from_cols(cols, cols_attr)
        if app is not None:
            out.append(app)
    return out


def _app_from_cols(cols: list[str], attrs: list[str | None]) -> ComputeApp | None:
    n = len(attrs)
    if len(cols) < n or n == 0:
        return None
    if len(cols) > n:
        # a process name containing ", ": glue the surplus back into it
        if "process_name" not in attrs:
            return None
        k = attrs.index("process_name")
        extra = len(cols) - n
        cols = cols[:k] + [", ".join(cols[k : k + extra + 1])] + cols[k + extra + 1 :]
    vals: dict[str, object] = {}
    try:
        for attr, raw in zip(attrs, cols, strict=True):
            if attr is None:
                continue
            if attr == "pid":
                if not raw.isdigit():
                    return None
                vals["pid"] = int(raw)
            elif attr == "used_mib":
                vals["used_mib"] = _int(raw)
            else:
                vals[attr] = _str(raw)
    except _Bad:
        return None
    if "pid" not in vals:
        return None
    uuid = vals.get("gpu_uuid")
    if isinstance(uuid, str) and not uuid.startswith(("GPU-", "MIG-")):
        return None
    return ComputeApp(
        pid=vals["pid"],  # type: ignore[arg-type]
        process_name=vals.get("process_name") or "",  # type: ignore[arg-type]
        used_mib=vals.get("used_mib"),  # type: ignore[arg-type]
        gpu_uuid=vals.get("gpu_uuid"),  # type: ignore[arg-type]
        gpu_bus_id=vals.get("gpu_bus_id"),  # type: ignore[arg-type]
    )


# --------------------------------------------------------------------------- errors

_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_FIELD_RE = re.compile(r'Field "([^"]*)" is not a valid field to query')


def _one_line(text: str, limit: int = 200) -> str:
    text = _ANSI_RE.sub("", text)
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def _first_line(text: str) -> str:
    for line in _ANSI_RE.sub("", text).splitlines():
        if line.strip():
            return line.strip()
    return ""


def classify_nvidia_smi_error(stdout: str, stderr: str, exit_code: int | None) -> str | None:
    """A one-line human message for a failed ``nvidia-smi`` run, or None if it succeeded.

    ``exit_code`` None means the run did not finish (timed out / was killed by us).
    """
    try:
        return _classify(stdout or "", stderr or "", exit_code)
    except Exception:  # noqa: BLE001 - fuzz-safe by contract
        return f"nvidia-smi failed (exit {exit_code})"


def _classify(stdout: str, stderr: str, exit_code: int | None) -> str | None:
    if not isinstance(stdout, str):
        stdout = str(stdout)
    if not isinstance(stderr, str):
        stderr = str(stderr)
    if exit_code == 0:
        return None
    both = f"{stdout}\n{stderr}"
    if exit_code is None:
        return "nvidia-smi did not answer in time (hung or killed)"
    if "couldn't communicate with the NVIDIA driver" in both:
        return (
            "NVIDIA driver not loaded: "
            + _one_line(
                "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
            )
            + f" (exit {exit_code})"
        )
    if "No devices were found" in both:
        return f"no GPU visible: No devices were found (exit {exit_code})"
    m = _FIELD_RE.search(both)
    if m:
        return f'nvidia-smi rejected query field "{_one_line(m.group(1), 80)}" (not a valid field, exit {exit_code})'
    if "Driver/library version mismatch" in both:
        return f"NVML driver/library version mismatch (driver updated, reboot needed?) (exit {exit_code})"
    if "Unable to determine the device handle" in both:
        line = next(
            (
                ln.strip()
                for ln in both.splitlines()
                if "Unable to determine the device handle" in ln
            ),
            "",
        )
        return f"GPU unreachable: {_one_line(line, 160)} (exit {exit_code})"
    if exit_code == 127 or "command not found" in both or "No such file or directory" in both:
        return f"nvidia-smi not found on the host (exit {exit_code})"
    if exit_code == 126:
        return "nvidia-smi is not executable (permission denied, exit 126)"
    if "Invalid combination of input arguments" in both or "is not recognized" in both:
        return f"nvidia-smi rejected its arguments: {_one_line(_first_line(both), 160)} (exit {exit_code})"
    if exit_code < 0:
        return f"nvidia-smi was killed by signal {-exit_code}"
    detail = _first_line(stderr) or _first_line(stdout)
    if detail:
        return f"nvidia-smi failed (exit {exit_code}): {_one_line(detail, 160)}"
    return f"nvidia-smi failed (exit {exit_code})"


# --------------------------------------------------------------------------- streams


class GpuStreamAssembler:
    """Turn the lines of a long-running ``nvidia-smi --query-gpu=... -lms N`` into snapshots.

    ``nvidia-smi`` prints one line per GPU per period, GPUs in index order, with
    no separator between periods. A snapshot is complete when the index wraps
    (index <= previous index). Once one full snapshot has been seen, the next
    one is emitted as soon as its last GPU arrives (no one-period lag), which is
    what makes a 1-GPU host yield one snapshot per line. ``expected_gpus`` gives
    that count up front. Header lines are skipped; other unparseable lines are
    skipped and counted in ``garbage``.
    """

    def __init__(
        self, fields: Iterable[str] = GPU_QUERY_FIELDS, expected_gpus: int | None = None
    ) -> None:
        self.fields = tuple(fields)
        self.garbage = 0
        self.headers = 0
        self.snapshots = 0
        self._pending: list[GpuSample] = []
        self._expected = expected_gpus if expected_gpus and expected_gpus > 0 else None
        self._last_indices: tuple[int, ...] | None = None

    @property
    def pending(self) -> list[GpuSample]:
        return list(self._pending)

    def feed(self, line: str) -> list[list[GpuSample]]:
        """Feed one line; returns the snapshots it completed (usually 0 or 1)."""
        try:
            return self._feed(line)
        except Exception:  # noqa: BLE001 - fuzz-safe by contract
            self.garbage += 1
            return []

    def feed_lines(self, text: str) -> list[list[GpuSample]]:
        out: list[list[GpuSample]] = []
        if not isinstance(text, str):
            return out
        for line in text.splitlines():
            out.extend(self.feed(line))
        return out

    def flush(self) -> list[GpuSample] | None:
        """End of stream: the pending partial snapshot, if any."""
        if not self._pending:
            return None
        snap, self._pending = self._pending, []
        self.snapshots += 1
        return snap

    def _feed(self, line: str) -> list[list[GpuSample]]:
        if not isinstance(line, str):
            self.garbage += 1
            return []
        stripped = line.strip()
        if not stripped:
            return []
        sample = parse_gpu_line(stripped, self.fields)
        if sample is None:
            if stripped.startswith(self.fields[0] + ",") or stripped == self.fields[0]:
                self.headers += 1
            else:
                self.garbage += 1
            return []
        out: list[list[GpuSample]] = []
        if self._pending and sample.index <= self._pending[-1].index:
            out.append(self._emit())
        self._pending.append(sample)
        if self._complete():
            out.append(self._emit())
        return out

    def _complete(self) -> bool:
        if self._expected is not None:
            return len(self._pending) >= self._expected
        if self._last_indices is None:
            return False
        return tuple(s.index for s in self._pending) == self._last_indices

    def _emit(self) -> list[GpuSample]:
        snap, self._pending = self._pending, []
        self._last_indices = tuple(s.index for s in snap)
        self.snapshots += 1
        return snap
