"""``--query-gpu`` and ``--query-compute-apps`` CSV of the simulated nvidia-smi.

Field names, aliases, units and ``[N/A]`` as driver 580 prints them.
"""

from __future__ import annotations

from sglconsole.sim.nvidia_smi.format import REASON_BITS, format_query_time, yes


def _watts_number(value):
    return None if value is None else f"{value:.2f}"


def _text(value):
    return None if value is None else str(value)


def _yes_no(value):
    return None if value is None else ("Yes" if value else "No")


# canonical field -> (unit, getter(state) -> str | None); the getters call it `gpu`: one per row
GPU_FIELDS: dict = {
    "timestamp": ("", lambda gpu: format_query_time(gpu["now"])),
    "driver_version": ("", lambda gpu: gpu["driver"]),
    "count": ("", lambda gpu: str(gpu["count"])),
    "name": ("", lambda gpu: gpu["name"]),
    "serial": ("", lambda gpu: gpu["serial"]),
    "uuid": ("", lambda gpu: gpu["uuid"]),
    "pci.bus_id": ("", lambda gpu: gpu["bus_id"]),
    "pci.domain": ("", lambda gpu: "0x" + gpu["bus_id"][4:8]),
    "pci.bus": ("", lambda gpu: "0x" + gpu["bus_id"][9:11]),
    "pci.device": ("", lambda gpu: "0x" + gpu["bus_id"][12:14]),
    "pci.device_id": ("", lambda gpu: "0x" + gpu["model"].pci_device_id),
    "pci.sub_device_id": ("", lambda gpu: "0x" + gpu["model"].pci_sub_system_id),
    "pcie.link.gen.current": ("", lambda gpu: str(gpu["model"].pcie_gen)),
    "pcie.link.gen.gpucurrent": ("", lambda gpu: str(gpu["model"].pcie_gen)),
    "pcie.link.gen.max": ("", lambda gpu: str(gpu["model"].pcie_gen)),
    "pcie.link.gen.gpumax": ("", lambda gpu: str(gpu["model"].pcie_gen)),
    "pcie.link.gen.hostmax": ("", lambda gpu: None),
    "pcie.link.width.current": ("", lambda gpu: str(gpu["model"].pcie_width)),
    "pcie.link.width.max": ("", lambda gpu: str(gpu["model"].pcie_width)),
    "index": ("", lambda gpu: str(gpu["index"])),
    "display_active": ("", lambda gpu: "Disabled"),
    "persistence_mode": ("", lambda gpu: yes(gpu["model"].persistence)),
    "accounting.mode": ("", lambda gpu: "Disabled"),
    "accounting.buffer_size": ("", lambda gpu: "4000"),
    "driver_model.current": ("", lambda gpu: None),
    "driver_model.pending": ("", lambda gpu: None),
    "vbios_version": ("", lambda gpu: gpu["model"].vbios),
    "inforom.img": ("", lambda gpu: gpu["model"].inforom[0]),
    "inforom.oem": ("", lambda gpu: gpu["model"].inforom[1]),
    "inforom.ecc": ("", lambda gpu: gpu["model"].inforom[2]),
    "inforom.pwr": ("", lambda gpu: None),
    "gom.current": ("", lambda gpu: None),
    "gom.pending": ("", lambda gpu: None),
    "fan.speed": ("%", lambda gpu: _text(gpu["fan"])),
    "pstate": ("", lambda gpu: gpu["pstate"]),
    "clocks_event_reasons.supported": ("", lambda gpu: "0x00000000000001FF"),
    "clocks_event_reasons.active": ("", lambda gpu: f"0x{gpu['reasons']:016X}"),
    "memory.total": ("MiB", lambda gpu: str(gpu["mem_total"])),
    "memory.reserved": ("MiB", lambda gpu: str(gpu["mem_reserved"])),
    "memory.used": ("MiB", lambda gpu: str(gpu["mem_used"])),
    "memory.free": ("MiB", lambda gpu: str(gpu["mem_free"])),
    "compute_mode": ("", lambda gpu: "Default"),
    "compute_cap": ("", lambda gpu: gpu["model"].compute_cap),
    "utilization.gpu": ("%", lambda gpu: str(gpu["util"])),
    "utilization.memory": ("%", lambda gpu: str(gpu["mem_util"])),
    "utilization.encoder": ("%", lambda gpu: "0"),
    "utilization.decoder": ("%", lambda gpu: "0"),
    "utilization.jpeg": ("%", lambda gpu: "0"),
    "utilization.ofa": ("%", lambda gpu: "0"),
    "encoder.stats.sessionCount": ("", lambda gpu: "0"),
    "encoder.stats.averageFps": ("", lambda gpu: "0"),
    "encoder.stats.averageLatency": ("", lambda gpu: "0"),
    "ecc.mode.current": ("", lambda gpu: yes(gpu["model"].ecc)),
    "ecc.mode.pending": ("", lambda gpu: yes(gpu["model"].ecc)),
    "ecc.errors.corrected.volatile.total": ("", lambda gpu: _text(gpu["ecc_cor"])),
    "ecc.errors.corrected.aggregate.total": ("", lambda gpu: _text(gpu["ecc_cor"])),
    "ecc.errors.uncorrected.volatile.total": ("", lambda gpu: _text(gpu["ecc_unc"])),
    "ecc.errors.uncorrected.aggregate.total": ("", lambda gpu: _text(gpu["ecc_unc"])),
    "retired_pages.single_bit_ecc.count": ("", lambda gpu: None),
    "retired_pages.double_bit.count": ("", lambda gpu: None),
    "retired_pages.pending": ("", lambda gpu: None),
    "remapped_rows.correctable": ("", lambda gpu: _text(gpu["rr_cor"])),
    "remapped_rows.uncorrectable": ("", lambda gpu: _text(gpu["rr_unc"])),
    "remapped_rows.pending": ("", lambda gpu: _yes_no(gpu["rr_pending"])),
    "remapped_rows.failure": ("", lambda gpu: _yes_no(gpu["rr_failure"])),
    "temperature.gpu": ("", lambda gpu: str(gpu["temp"])),
    "temperature.memory": ("", lambda gpu: _text(gpu["mem_temp"])),
    "power.draw": ("W", lambda gpu: _watts_number(gpu["power"])),
    "power.draw.average": ("W", lambda gpu: _watts_number(gpu["power_avg"])),
    "power.draw.instant": ("W", lambda gpu: _watts_number(gpu["power_inst"])),
    "power.limit": ("W", lambda gpu: _watts_number(gpu["power_limit"])),
    "enforced.power.limit": ("W", lambda gpu: _watts_number(gpu["power_limit"])),
    "power.default_limit": ("W", lambda gpu: _watts_number(gpu["power_limit"])),
    "power.min_limit": ("W", lambda gpu: _watts_number(gpu["model"].power_min_w)),
    "power.max_limit": ("W", lambda gpu: _watts_number(gpu["power_limit"])),
    "clocks.current.graphics": ("MHz", lambda gpu: str(gpu["sm"])),
    "clocks.current.sm": ("MHz", lambda gpu: str(gpu["sm"])),
    "clocks.current.memory": ("MHz", lambda gpu: str(gpu["mem_clk"])),
    "clocks.current.video": ("MHz", lambda gpu: str(gpu["video"])),
    "clocks.applications.graphics": ("MHz", lambda gpu: str(gpu["model"].sm_max_mhz)),
    "clocks.applications.memory": ("MHz", lambda gpu: str(gpu["model"].mem_max_mhz)),
    "clocks.default_applications.graphics": ("MHz", lambda gpu: str(gpu["model"].sm_max_mhz)),
    "clocks.default_applications.memory": ("MHz", lambda gpu: str(gpu["model"].mem_max_mhz)),
    "clocks.max.graphics": ("MHz", lambda gpu: str(gpu["model"].sm_max_mhz)),
    "clocks.max.sm": ("MHz", lambda gpu: str(gpu["model"].sm_max_mhz)),
    "clocks.max.memory": ("MHz", lambda gpu: str(gpu["model"].mem_max_mhz)),
    "mig.mode.current": ("", lambda gpu: gpu["mig"]),
    "mig.mode.pending": ("", lambda gpu: gpu["mig"]),
}

for _name, _bit in REASON_BITS:
    GPU_FIELDS[f"clocks_event_reasons.{_name}"] = (
        "",
        lambda gpu, _mask=_bit: "Active" if gpu["reasons"] & _mask else "Not Active",
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

# --query-compute-apps: canonical -> (header name, unit, getter(state, proc)), as `gpu`, `proc`
APP_FIELDS: dict = {
    "timestamp": ("timestamp", "", lambda gpu, proc: format_query_time(gpu["now"])),
    "gpu_name": ("gpu_name", "", lambda gpu, proc: gpu["name"]),
    "gpu_bus_id": ("gpu_bus_id", "", lambda gpu, proc: gpu["bus_id"]),
    "gpu_serial": ("gpu_serial", "", lambda gpu, proc: gpu["serial"]),
    "gpu_uuid": ("gpu_uuid", "", lambda gpu, proc: gpu["uuid"]),
    "pid": ("pid", "", lambda gpu, proc: str(proc[0])),
    "process_name": ("process_name", "", lambda gpu, proc: proc[1]),
    "used_memory": ("used_gpu_memory", "MiB", lambda gpu, proc: str(proc[2])),
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
