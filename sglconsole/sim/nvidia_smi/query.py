"""``--query-gpu`` and ``--query-compute-apps`` CSV of the simulated nvidia-smi.

Field names, aliases, units and ``[N/A]`` as driver 580 prints them.
"""

from __future__ import annotations

from sglconsole.sim.nvidia_smi.format import REASON_BITS, format_query_time, yes


def _watts_number(value):
    return None if value is None else f"{value:.2f}"


def _text(value):
    return None if value is None else str(value)


# canonical field -> (unit, getter(state) -> str | None); the getters call it `s`: one per row
GPU_FIELDS: dict = {
    "timestamp": ("", lambda s: format_query_time(s["now"])),
    "driver_version": ("", lambda s: s["driver"]),
    "count": ("", lambda s: str(s["count"])),
    "name": ("", lambda s: s["name"]),
    "serial": ("", lambda s: s["serial"]),
    "uuid": ("", lambda s: s["uuid"]),
    "pci.bus_id": ("", lambda s: s["bus_id"]),
    "pci.domain": ("", lambda s: "0x" + s["bus_id"][4:8]),
    "pci.bus": ("", lambda s: "0x" + s["bus_id"][9:11]),
    "pci.device": ("", lambda s: "0x" + s["bus_id"][12:14]),
    "pci.device_id": ("", lambda s: "0x" + s["model"].pci_device_id),
    "pci.sub_device_id": ("", lambda s: "0x" + s["model"].pci_sub_system_id),
    "pcie.link.gen.current": ("", lambda s: str(s["model"].pcie_gen)),
    "pcie.link.gen.gpucurrent": ("", lambda s: str(s["model"].pcie_gen)),
    "pcie.link.gen.max": ("", lambda s: str(s["model"].pcie_gen)),
    "pcie.link.gen.gpumax": ("", lambda s: str(s["model"].pcie_gen)),
    "pcie.link.gen.hostmax": ("", lambda s: None),
    "pcie.link.width.current": ("", lambda s: str(s["model"].pcie_width)),
    "pcie.link.width.max": ("", lambda s: str(s["model"].pcie_width)),
    "index": ("", lambda s: str(s["index"])),
    "display_active": ("", lambda s: "Disabled"),
    "persistence_mode": ("", lambda s: yes(s["model"].persistence)),
    "accounting.mode": ("", lambda s: "Disabled"),
    "accounting.buffer_size": ("", lambda s: "4000"),
    "driver_model.current": ("", lambda s: None),
    "driver_model.pending": ("", lambda s: None),
    "vbios_version": ("", lambda s: s["model"].vbios),
    "inforom.img": ("", lambda s: s["model"].inforom[0]),
    "inforom.oem": ("", lambda s: s["model"].inforom[1]),
    "inforom.ecc": ("", lambda s: s["model"].inforom[2]),
    "inforom.pwr": ("", lambda s: None),
    "gom.current": ("", lambda s: None),
    "gom.pending": ("", lambda s: None),
    "fan.speed": ("%", lambda s: _text(s["fan"])),
    "pstate": ("", lambda s: s["pstate"]),
    "clocks_event_reasons.supported": ("", lambda s: "0x00000000000001FF"),
    "clocks_event_reasons.active": ("", lambda s: f"0x{s['reasons']:016X}"),
    "memory.total": ("MiB", lambda s: str(s["mem_total"])),
    "memory.reserved": ("MiB", lambda s: str(s["mem_reserved"])),
    "memory.used": ("MiB", lambda s: str(s["mem_used"])),
    "memory.free": ("MiB", lambda s: str(s["mem_free"])),
    "compute_mode": ("", lambda s: "Default"),
    "compute_cap": ("", lambda s: s["model"].compute_cap),
    "utilization.gpu": ("%", lambda s: str(s["util"])),
    "utilization.memory": ("%", lambda s: str(s["mem_util"])),
    "utilization.encoder": ("%", lambda s: "0"),
    "utilization.decoder": ("%", lambda s: "0"),
    "utilization.jpeg": ("%", lambda s: "0"),
    "utilization.ofa": ("%", lambda s: "0"),
    "encoder.stats.sessionCount": ("", lambda s: "0"),
    "encoder.stats.averageFps": ("", lambda s: "0"),
    "encoder.stats.averageLatency": ("", lambda s: "0"),
    "ecc.mode.current": ("", lambda s: yes(s["model"].ecc)),
    "ecc.mode.pending": ("", lambda s: yes(s["model"].ecc)),
    "ecc.errors.corrected.volatile.total": ("", lambda s: _text(s["ecc_unc"])),
    "ecc.errors.corrected.aggregate.total": ("", lambda s: _text(s["ecc_unc"])),
    "ecc.errors.uncorrected.volatile.total": ("", lambda s: _text(s["ecc_unc"])),
    "ecc.errors.uncorrected.aggregate.total": ("", lambda s: _text(s["ecc_unc"])),
    "retired_pages.single_bit_ecc.count": ("", lambda s: None),
    "retired_pages.double_bit.count": ("", lambda s: None),
    "retired_pages.pending": ("", lambda s: None),
    "remapped_rows.correctable": ("", lambda s: "0" if s["model"].ecc else None),
    "remapped_rows.uncorrectable": ("", lambda s: "0" if s["model"].ecc else None),
    "remapped_rows.pending": ("", lambda s: "No" if s["model"].ecc else None),
    "remapped_rows.failure": ("", lambda s: "No" if s["model"].ecc else None),
    "temperature.gpu": ("", lambda s: str(s["temp"])),
    "temperature.memory": ("", lambda s: _text(s["mem_temp"])),
    "power.draw": ("W", lambda s: _watts_number(s["power"])),
    "power.draw.average": ("W", lambda s: _watts_number(s["power_avg"])),
    "power.draw.instant": ("W", lambda s: _watts_number(s["power_inst"])),
    "power.limit": ("W", lambda s: _watts_number(s["power_limit"])),
    "enforced.power.limit": ("W", lambda s: _watts_number(s["power_limit"])),
    "power.default_limit": ("W", lambda s: _watts_number(s["power_limit"])),
    "power.min_limit": ("W", lambda s: _watts_number(s["model"].power_min_w)),
    "power.max_limit": ("W", lambda s: _watts_number(s["power_limit"])),
    "clocks.current.graphics": ("MHz", lambda s: str(s["sm"])),
    "clocks.current.sm": ("MHz", lambda s: str(s["sm"])),
    "clocks.current.memory": ("MHz", lambda s: str(s["mem_clk"])),
    "clocks.current.video": ("MHz", lambda s: str(s["video"])),
    "clocks.applications.graphics": ("MHz", lambda s: str(s["model"].sm_max_mhz)),
    "clocks.applications.memory": ("MHz", lambda s: str(s["model"].mem_max_mhz)),
    "clocks.default_applications.graphics": ("MHz", lambda s: str(s["model"].sm_max_mhz)),
    "clocks.default_applications.memory": ("MHz", lambda s: str(s["model"].mem_max_mhz)),
    "clocks.max.graphics": ("MHz", lambda s: str(s["model"].sm_max_mhz)),
    "clocks.max.sm": ("MHz", lambda s: str(s["model"].sm_max_mhz)),
    "clocks.max.memory": ("MHz", lambda s: str(s["model"].mem_max_mhz)),
    "mig.mode.current": ("", lambda s: s["mig"]),
    "mig.mode.pending": ("", lambda s: s["mig"]),
}

for _name, _bit in REASON_BITS:
    GPU_FIELDS[f"clocks_event_reasons.{_name}"] = (
        "",
        lambda s, _mask=_bit: "Active" if s["reasons"] & _mask else "Not Active",
    )

GPU_ALIASES = {
    "gpu_name": "name",
    "gpu_serial": "serial",
    "gpu_uuid": "uuid",
    "gpu_bus_id": "pci.bus_id",
    "clocks.gr": "clocks.current.graphics",
    "clocks.sm": "clocks.current.sm",
    "clocks.mem": "clocks.current.memory",
    "clocks.video": "clocks.current.video",
    "clocks.applications.gr": "clocks.applications.graphics",
    "clocks.applications.mem": "clocks.applications.memory",
    "clocks.default_applications.gr": "clocks.default_applications.graphics",
    "clocks.default_applications.mem": "clocks.default_applications.memory",
    "clocks.max.gr": "clocks.max.graphics",
    "clocks.max.mem": "clocks.max.memory",
}
for _event_field in [field for field in GPU_FIELDS if field.startswith("clocks_event_reasons.")]:
    _suffix = _event_field.split(".", 1)[1]
    GPU_ALIASES[f"clocks_throttle_reasons.{_suffix}"] = _event_field
    GPU_ALIASES[f"clock_throttle_reasons.{_suffix}"] = _event_field

# --query-compute-apps: canonical -> (header name, unit, getter(state, proc)), as `s`, `p`
APP_FIELDS: dict = {
    "timestamp": ("timestamp", "", lambda s, p: format_query_time(s["now"])),
    "gpu_name": ("gpu_name", "", lambda s, p: s["name"]),
    "gpu_bus_id": ("gpu_bus_id", "", lambda s, p: s["bus_id"]),
    "gpu_serial": ("gpu_serial", "", lambda s, p: s["serial"]),
    "gpu_uuid": ("gpu_uuid", "", lambda s, p: s["uuid"]),
    "pid": ("pid", "", lambda s, p: str(p[0])),
    "process_name": ("process_name", "", lambda s, p: p[1]),
    "used_memory": ("used_gpu_memory", "MiB", lambda s, p: str(p[2])),
}
APP_ALIASES = {"name": "process_name", "used_gpu_memory": "used_memory"}


class UnknownField(ValueError):
    """A ``--query-*`` field nvidia-smi does not know; the text is nvidia-smi's message."""


def resolve_fields(spec: str, table: dict, aliases: dict) -> list[str]:
    """The canonical names of a comma-separated ``--query-*`` field list."""
    fields = []
    for raw in spec.split(","):
        name = raw.strip()
        canonical = aliases.get(name, name)
        if canonical not in table:
            raise UnknownField(f'Field "{name}" is not a valid field to query.\n\n')
        fields.append(canonical)
    return fields


def _cell(value: str | None, unit: str, units: bool) -> str:
    if value is None:
        return "[N/A]"
    if unit and units:
        return f"{value} {unit}"
    return value


def render_query_gpu(states: list[dict], fields: list[str], *, units: bool = True) -> list[str]:
    """One CSV line per GPU for canonical ``fields``."""
    lines = []
    for state in states:
        cells = []
        for field in fields:
            unit, get = GPU_FIELDS[field]
            cells.append(_cell(get(state), unit, units))
        lines.append(", ".join(cells))
    return lines


def gpu_query_header(fields: list[str]) -> str:
    return ", ".join(
        f"{field} [{GPU_FIELDS[field][0]}]" if GPU_FIELDS[field][0] else field for field in fields
    )


def render_compute_apps(states: list[dict], fields: list[str], *, units: bool = True) -> list[str]:
    lines = []
    for state in states:
        for proc in state["procs"]:
            cells = []
            for field in fields:
                _, unit, get = APP_FIELDS[field]
                cells.append(_cell(get(state, proc), unit, units))
            lines.append(", ".join(cells))
    return lines


def apps_query_header(fields: list[str]) -> str:
    out = []
    for field in fields:
        header, unit, _ = APP_FIELDS[field]
        out.append(f"{header} [{unit}]" if unit else header)
    return ", ".join(out)
