"""``nvidia-smi --query-compute-apps`` lines as ``ComputeApp``s (pure, stdlib only)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sglconsole.core.nvidia_smi.values import BadValue, split_csv, to_int, to_str

__all__ = ["COMPUTE_APPS_FIELDS", "ComputeApp", "parse_compute_apps"]

#: The fields the console asks ``--query-compute-apps`` for.
COMPUTE_APPS_FIELDS: tuple[str, ...] = ("pid", "process_name", "used_memory", "gpu_uuid")


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
    cols_attr = [_APP_ATTR.get(field.strip()) for field in fields]
    out: list[ComputeApp] = []
    for raw in text.splitlines():
        line = raw.strip().lstrip("\ufeff")
        if not line:
            continue
        cols = split_csv(line)
        if cols and cols[0] == "pid":  # header: map by its names from now on
            cols_attr = [_APP_ATTR.get(_header_name(col)) for col in cols]
            continue
        app = _app_from_cols(cols, cols_attr)
        if app is not None:
            out.append(app)
    return out


def _app_from_cols(cols: list[str], attrs: list[str | None]) -> ComputeApp | None:
    wanted = len(attrs)
    if len(cols) < wanted or wanted == 0:
        return None
    if len(cols) > wanted:
        # a process name containing ", ": glue the surplus back into it
        if "process_name" not in attrs:
            return None
        name_at = attrs.index("process_name")
        extra = len(cols) - wanted
        name = ", ".join(cols[name_at : name_at + extra + 1])
        cols = cols[:name_at] + [name] + cols[name_at + extra + 1 :]
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
                vals["used_mib"] = to_int(raw)
            else:
                vals[attr] = to_str(raw)
    except BadValue:
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
