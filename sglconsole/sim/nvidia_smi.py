"""A replay of the real ``nvidia-smi`` CLI for a simulated GPU host.

Used as the simulated host's ``bin/nvidia-smi``::

    #!/path/python3
    from sglconsole.sim.nvidia_smi import main; raise SystemExit(main())

The host ROOT comes from ``main(root=...)``, else env ``SGLSIM_ROOT``, else the
launcher's location (``ROOT/bin/nvidia-smi``). Host settings and registered
GPU uses are described in :mod:`sglconsole.sim.gpustate`.

Output formats are modelled byte-for-byte on real captures of driver
580.159.04 (tests/fixtures/nvidia-smi/h200/): ``--query-gpu`` /
``--query-compute-apps`` CSV (header names, units, ``[N/A]``), the default
table, ``-q`` text, ``-q -x`` XML, ``-L``; errors print nvidia-smi's own text on
stdout with its exit codes (invalid field 2, no such device 6, no driver 9).

Startup cost matters (it runs every few seconds per simulated host): imports
are stdlib-only and minimal.
"""

from __future__ import annotations

import os
import sys
import time

from sglconsole.sim import gpustate
from sglconsole.sim.gpu_models import get_model, gpu_bus_id, gpu_serial, gpu_uuid, noise

__all__ = ["main", "gpu_states", "render_table", "render_xml", "render_text_query", "find_root"]

NO_DRIVER_TEXT = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    "Make sure that the latest NVIDIA driver is installed and running.\n\n"
)
NO_DEVICES_TEXT = "No devices were found\n"
INVALID_COMBINATION_TEXT = (
    "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n"
)

EXIT_INVALID_ARG = 2
EXIT_NOT_FOUND = 6
EXIT_NO_DRIVER = 9
EXIT_GPU_LOST = 15


# =========================================================================== state


def _clamp(x: float, lo: float = 0.0, hi: float = 1.0) -> float:
    return lo if x < lo else hi if x > hi else x


def _fmt_time(t: float) -> str:
    """``Wed Dec  2 12:18:41 2026`` (the table / -q timestamp)."""
    lt = time.localtime(t)
    return time.strftime("%a %b ", lt) + f"{lt.tm_mday:>2} " + time.strftime("%H:%M:%S %Y", lt)


def _fmt_query_time(t: float) -> str:
    """``2026/12/02 12:18:41.123`` (the ``timestamp`` query field)."""
    lt = time.localtime(t)
    return time.strftime("%Y/%m/%d %H:%M:%S", lt) + f".{int((t % 1) * 1000):03d}"


def gpu_states(host: dict, uses: list[dict], now: float | None = None) -> list[dict]:
    """The simulated GPUs' readings at ``now``: one dict per GPU, index order.

    Deterministic for a given (host, uses, now); ``now`` adds small variation
    (it changes four times a second).
    """
    if now is None:
        now = time.time()
    m = get_model(host.get("gpu_model"))
    seed = str(host.get("uuid_seed") or "sim")
    count = int(host.get("gpu_count", 1))
    offset = int(host.get("pid_offset", 0) or 0)
    tick = int(now * 4)
    states = []
    for i in range(count):

        def nz(key: str, _i: int = i) -> float:
            return noise(seed, _i, tick, key)

        procs = []
        util_sum = 0
        mem_sum = 0
        for u in uses:
            if i in u.get("gpus", ()):
                procs.append((u["pid"] + offset, u.get("name") or "python3", int(u["mem_mib"])))
                util_sum += int(u.get("util", 0))
                mem_sum += int(u["mem_mib"])
        procs.sort()
        util = min(100, util_sum)
        if util >= 99:
            util = 100 if nz("u") > 0.6 else 99
        x = util / 100.0
        busy = util > 0 or bool(procs)

        mem_used = m.mem_idle_used_mib
        if procs:
            mem_used += mem_sum + m.mem_ctx_base_mib + m.mem_ctx_per_proc_mib * len(procs)
        gap = m.mem_free_gap_busy_mib if procs else m.mem_free_gap_mib
        mem_used = min(mem_used, m.mem_total_mib - gap)
        mem_free = m.mem_total_mib - gap - mem_used

        idle_w = m.power_idle_w + (1.0 if procs and util == 0 else 0.0)
        power = idle_w + (m.power_full_w - m.power_idle_w) * x
        power += nz("p") * (2.8 if util >= 90 else 0.4 + 2.0 * x)
        power = max(m.power_idle_w * 0.8, min(power, m.power_limit_w - 0.3))
        heat = _clamp((power - m.power_idle_w) / (m.power_full_w - m.power_idle_w))
        temp = int(round(m.temp_idle_c + (m.temp_full_c - m.temp_idle_c) * heat + 0.6 * nz("t")))
        if procs and util == 0:
            temp += 3  # still warm from the work that loaded it
        mem_temp = None
        if m.mem_temp_delta_c is not None:
            mem_temp = int(round(temp + 1 - 9 * heat))

        if util == 0:
            sm = m.sm_idle_mhz
        else:
            sm = m.sm_busy_mhz - (m.sm_busy_mhz - m.sm_capped_mhz) * _clamp((x - 0.5) / 0.5)
            if util >= 90:
                sm += 15 * round(2 * nz("sm"))
            sm = int(round(sm / 15.0)) * 15
        mem_clk = m.mem_busy_mhz if busy else m.mem_idle_mhz
        video = m.video_busy_mhz if util > 0 else m.video_idle_mhz

        fan = None
        if m.fan:
            span = m.temp_full_c - m.temp_idle_c
            fan = int(
                round(
                    m.fan_idle_pct
                    + (m.fan_max_pct - m.fan_idle_pct) * _clamp((temp - m.temp_idle_c) / span)
                )
            )

        reasons = 0x1 if util == 0 else (0x4 if util >= 90 else 0x0)
        mem_util = int(round(util * m.mem_util_ratio + (nz("mu") if util >= 90 else 0)))
        if m.bar1_total_mib >= m.mem_total_mib:
            bar1_used = mem_used + 1
        else:
            bar1_used = min(m.bar1_total_mib - 1, 1 + 2 * len(procs))
        mem_power = None
        if m.mem_power_idle_w is not None:
            mem_power = (
                m.mem_power_idle_w + (m.mem_power_full_w - m.mem_power_idle_w) * x + nz("mp")
            )
        states.append(
            {
                "index": i,
                "model": m,
                "name": m.name,
                "uuid": gpu_uuid(seed, i),
                "serial": gpu_serial(seed, i),
                "bus_id": gpu_bus_id(m, i),
                "driver": str(host.get("driver_version", "580.159.04")),
                "cuda": str(host.get("cuda_version", "13.0")),
                "count": count,
                "now": now,
                "util": util,
                "mem_util": mem_util,
                "mem_total": m.mem_total_mib,
                "mem_used": mem_used,
                "mem_free": mem_free,
                "mem_reserved": m.mem_reserved_mib,
                "bar1_total": m.bar1_total_mib,
                "bar1_used": bar1_used,
                "temp": temp,
                "heat": heat,
                "mem_temp": mem_temp,
                "power": power,
                "power_avg": power - 0.6 * nz("pa"),
                "power_inst": power + 12 * nz("pi") * (1 if util else 0.2),
                "mem_power": mem_power,
                "power_limit": m.power_limit_w,
                "sm": sm,
                "mem_clk": mem_clk,
                "video": video,
                "fan": fan,
                "pstate": m.pstate_busy if busy else m.pstate_idle,
                "mig": "Disabled" if m.mig else None,
                "ecc_unc": 0 if m.ecc else None,
                "reasons": reasons,
                "sw_power_cap_us": (int(now * 1000) % 9_000_000) if util >= 90 else 0,
                "tx_kbs": int(800 + 7200 * x + 100 * nz("tx")),
                "rx_kbs": int(500 + 14000 * x + 100 * nz("rx")),
                "procs": procs,
            }
        )
    return states


# =========================================================================== --query-gpu

_REASON_BITS = (
    ("gpu_idle", 0x1),
    ("applications_clocks_setting", 0x2),
    ("sw_power_cap", 0x4),
    ("hw_slowdown", 0x8),
    ("sync_boost", 0x10),
    ("sw_thermal_slowdown", 0x20),
    ("hw_thermal_slowdown", 0x40),
    ("hw_power_brake_slowdown", 0x80),
    ("display_clock_setting", 0x100),
)


def _w(v):
    return None if v is None else f"{v:.2f}"


def _n(v):
    return None if v is None else str(v)


def _yes(flag):
    return "Enabled" if flag else "Disabled"


# canonical field -> (unit, getter(state) -> str | None)
_GPU_FIELDS: dict = {
    "timestamp": ("", lambda s: _fmt_query_time(s["now"])),
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
    "persistence_mode": ("", lambda s: _yes(s["model"].persistence)),
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
    "fan.speed": ("%", lambda s: _n(s["fan"])),
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
    "ecc.mode.current": ("", lambda s: _yes(s["model"].ecc)),
    "ecc.mode.pending": ("", lambda s: _yes(s["model"].ecc)),
    "ecc.errors.corrected.volatile.total": ("", lambda s: _n(s["ecc_unc"])),
    "ecc.errors.corrected.aggregate.total": ("", lambda s: _n(s["ecc_unc"])),
    "ecc.errors.uncorrected.volatile.total": ("", lambda s: _n(s["ecc_unc"])),
    "ecc.errors.uncorrected.aggregate.total": ("", lambda s: _n(s["ecc_unc"])),
    "retired_pages.single_bit_ecc.count": ("", lambda s: None),
    "retired_pages.double_bit.count": ("", lambda s: None),
    "retired_pages.pending": ("", lambda s: None),
    "remapped_rows.correctable": ("", lambda s: "0" if s["model"].ecc else None),
    "remapped_rows.uncorrectable": ("", lambda s: "0" if s["model"].ecc else None),
    "remapped_rows.pending": ("", lambda s: "No" if s["model"].ecc else None),
    "remapped_rows.failure": ("", lambda s: "No" if s["model"].ecc else None),
    "temperature.gpu": ("", lambda s: str(s["temp"])),
    "temperature.memory": ("", lambda s: _n(s["mem_temp"])),
    "power.draw": ("W", lambda s: _w(s["power"])),
    "power.draw.average": ("W", lambda s: _w(s["power_avg"])),
    "power.draw.instant": ("W", lambda s: _w(s["power_inst"])),
    "power.limit": ("W", lambda s: _w(s["power_limit"])),
    "enforced.power.limit": ("W", lambda s: _w(s["power_limit"])),
    "power.default_limit": ("W", lambda s: _w(s["power_limit"])),
    "power.min_limit": ("W", lambda s: _w(s["model"].power_min_w)),
    "power.max_limit": ("W", lambda s: _w(s["power_limit"])),
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

for _name, _bit in _REASON_BITS:
    _GPU_FIELDS[f"clocks_event_reasons.{_name}"] = (
        "",
        lambda s, _b=_bit: "Active" if s["reasons"] & _b else "Not Active",
    )

_GPU_ALIASES = {
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
for _k in [k for k in _GPU_FIELDS if k.startswith("clocks_event_reasons.")]:
    _suffix = _k.split(".", 1)[1]
    _GPU_ALIASES[f"clocks_throttle_reasons.{_suffix}"] = _k
    _GPU_ALIASES[f"clock_throttle_reasons.{_suffix}"] = _k

# --query-compute-apps: canonical -> (header name, unit, getter(state, proc))
_APP_FIELDS: dict = {
    "timestamp": ("timestamp", "", lambda s, p: _fmt_query_time(s["now"])),
    "gpu_name": ("gpu_name", "", lambda s, p: s["name"]),
    "gpu_bus_id": ("gpu_bus_id", "", lambda s, p: s["bus_id"]),
    "gpu_serial": ("gpu_serial", "", lambda s, p: s["serial"]),
    "gpu_uuid": ("gpu_uuid", "", lambda s, p: s["uuid"]),
    "pid": ("pid", "", lambda s, p: str(p[0])),
    "process_name": ("process_name", "", lambda s, p: p[1]),
    "used_memory": ("used_gpu_memory", "MiB", lambda s, p: str(p[2])),
}
_APP_ALIASES = {"name": "process_name", "used_gpu_memory": "used_memory"}


class _CliError(Exception):
    def __init__(self, text: str, code: int) -> None:
        super().__init__(text)
        self.text = text
        self.code = code


def _resolve_fields(spec: str, table: dict, aliases: dict) -> list[str]:
    fields = []
    for raw in spec.split(","):
        f = raw.strip()
        canon = aliases.get(f, f)
        if canon not in table:
            raise _CliError(f'Field "{f}" is not a valid field to query.\n\n', EXIT_INVALID_ARG)
        fields.append(canon)
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
    for s in states:
        cells = []
        for f in fields:
            unit, get = _GPU_FIELDS[f]
            cells.append(_cell(get(s), unit, units))
        lines.append(", ".join(cells))
    return lines


def gpu_query_header(fields: list[str]) -> str:
    return ", ".join(f"{f} [{_GPU_FIELDS[f][0]}]" if _GPU_FIELDS[f][0] else f for f in fields)


def render_compute_apps(states: list[dict], fields: list[str], *, units: bool = True) -> list[str]:
    lines = []
    for s in states:
        for p in s["procs"]:
            cells = []
            for f in fields:
                _, unit, get = _APP_FIELDS[f]
                cells.append(_cell(get(s, p), unit, units))
            lines.append(", ".join(cells))
    return lines


def apps_query_header(fields: list[str]) -> str:
    out = []
    for f in fields:
        header, unit, _ = _APP_FIELDS[f]
        out.append(f"{header} [{unit}]" if unit else header)
    return ", ".join(out)


# =========================================================================== table

_BAR = "+" + "-" * 89 + "+"
_GPU_BAR = "+" + "-" * 41 + "+" + "-" * 24 + "+" + "-" * 22 + "+"
_TABLE_HEAD = (
    "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |\n"
    "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |\n"
    "|                                         |                        |               MIG M. |\n"
    "|=========================================+========================+======================|\n"
)
_PROC_HEAD = (
    "| Processes:                                                                              |\n"
    "|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |\n"
    "|        ID   ID                                                               Usage      |\n"
    "|=========================================================================================|\n"
)


def _clip_left(text: str, width: int) -> str:
    return text if len(text) <= width else "..." + text[-(width - 3) :]


def render_table(states: list[dict], *, driver: str, cuda: str, now: float) -> str:
    """The default ``nvidia-smi`` summary (driver 580 layout, 91 columns)."""
    out = [f"{_fmt_time(now)}       \n", _BAR + "\n"]
    out.append(f"| NVIDIA-SMI {driver:<23}Driver Version: {driver:<15}CUDA Version: {cuda:<9}|\n")
    out.append(_GPU_BAR + "\n")
    out.append(_TABLE_HEAD)
    for s in states:
        m = s["model"]
        name = s["name"] if len(s["name"]) <= 30 else s["name"][:27] + "..."
        pm = "On" if m.persistence else "Off"
        ecc = str(s["ecc_unc"]) if m.ecc else "Off"
        out.append(
            f"|{s['index']:>4}  {name:<31}{pm:<3} |   {s['bus_id']:<16} {'Off':>3} |{ecc:>21} |\n"
        )
        fan = "N/A" if s["fan"] is None else f"{s['fan']}%"
        pwr = f"{int(s['power'])}W"
        cap = f"{int(s['power_limit'])}W"
        mem = f"{s['mem_used']}MiB".rjust(11) + " / " + f"{s['mem_total']}MiB".rjust(9)
        out.append(
            f"|{fan:>4}  {s['temp']:>3}C    {s['pstate']:<3}{pwr:>15} / {cap:>5} |{mem} |"
            f"{str(s['util']) + '%':>8}{'Default':>13} |\n"
        )
        mig = s["mig"] or "N/A"
        out.append(f"|{'':41}|{'':24}|{mig:>21} |\n")
        out.append(_GPU_BAR + "\n")
    out.append("\n")
    out.append(_BAR + "\n")
    out.append(_PROC_HEAD)
    rows = [(s["index"], p) for s in states for p in s["procs"]]
    if not rows:
        out.append(f"|  {'No running processes found':<87}|\n")
    for idx, (pid, pname, mem) in rows:
        out.append(
            f"|{idx:>5}   N/A  N/A {pid:>15}{'C':>7}   {_clip_left(pname, 35):<35}"
            f"{str(mem) + 'MiB':>11} |\n"
        )
    out.append(_BAR + "\n")
    return "".join(out)


def render_list(states: list[dict]) -> str:
    return "".join(f"GPU {s['index']}: {s['name']} (UUID: {s['uuid']})\n" for s in states)


# =========================================================================== -q / -q -x
#
# One tree renders both the XML (tags) and the text (labels). Node:
#   (tag, label, value[, opts])  value: str | (xml_str, text_str) | list (group) | _Raw
#   tag None -> text only; label None -> XML only.
#   opts: indent (extra text indent levels), width (text key column), flatten
#   (text: children shown without a heading), empty (text for an empty group).


class _Raw(str):
    """Text placed on its own line inside an XML element (``<mig_devices>\\n None``)."""


def _mib(v) -> str:
    return "N/A" if v is None else f"{v} MiB"


def _mhz(v) -> str:
    return "N/A" if v is None else f"{v} MHz"


def _watts(v) -> str:
    return "N/A" if v is None else f"{v:.2f} W"


def _cel(v) -> str:
    return "N/A" if v is None else f"{v} C"


def _pct(v) -> str:
    return "N/A" if v is None else f"{v} %"


def _gpu_tree(s: dict) -> list:
    m = s["model"]
    bus = s["bus_id"]
    ecc = m.ecc
    zero = "0" if ecc else "N/A"
    no = "No" if ecc else "N/A"
    act = {name: ("Active" if s["reasons"] & bit else "Not Active") for name, bit in _REASON_BITS}
    max_sm = m.sm_max_mhz
    procs = [
        (
            "process_info",
            "",
            [
                ("gpu_instance_id", "GPU instance ID", "N/A"),
                ("compute_instance_id", "Compute instance ID", "N/A"),
                ("pid", "Process ID", str(pid)),
                ("type", "Type", "C", {"indent": 1}),
                ("process_name", "Name", pname, {"indent": 1}),
                ("used_memory", "Used GPU Memory", _mib(mem), {"indent": 1}),
            ],
            {"flatten": True},
        )
        for pid, pname, mem in s["procs"]
    ]
    supported = [
        (
            "supported_mem_clock",
            None,
            [("value", None, _mhz(mc))]
            + [("supported_graphics_clock", None, _mhz(gc)) for gc in m.supported_gr_clocks],
        )
        for mc in m.supported_mem_clocks
    ]
    na = "N/A"
    return [
        ("product_name", "Product Name", s["name"]),
        ("product_brand", "Product Brand", m.brand),
        ("product_architecture", "Product Architecture", m.architecture),
        ("display_mode", "Display Mode", "Requested functionality has been deprecated"),
        ("display_attached", "Display Attached", m.display_attached),
        ("display_active", "Display Active", "Disabled"),
        ("persistence_mode", "Persistence Mode", _yes(m.persistence)),
        ("addressing_mode", "Addressing Mode", "None"),
        (
            "mig_mode",
            "MIG Mode",
            [
                ("current_mig", "Current", s["mig"] or na),
                ("pending_mig", "Pending", s["mig"] or na),
            ],
        ),
        ("mig_devices", None, _Raw("None")),
        ("accounting_mode", "Accounting Mode", "Disabled"),
        ("accounting_mode_buffer_size", "Accounting Mode Buffer Size", "4000"),
        (
            "driver_model",
            "Driver Model",
            [("current_dm", "Current", na), ("pending_dm", "Pending", na)],
        ),
        ("serial", "Serial Number", s["serial"]),
        ("uuid", "GPU UUID", s["uuid"]),
        ("pdi", "GPU PDI", "0x" + s["uuid"][4:12] + s["uuid"][-8:]),
        ("minor_number", "Minor Number", str(s["index"])),
        ("vbios_version", "VBIOS Version", m.vbios),
        ("multigpu_board", "MultiGPU Board", "No"),
        ("board_id", "Board ID", "0x" + f"{int(bus[9:11], 16) << 8 | int(bus[12:14], 16):x}"),
        ("board_part_number", "Board Part Number", m.board_part),
        ("gpu_part_number", "GPU Part Number", m.gpu_part),
        ("gpu_fru_part_number", "FRU Part Number", na),
        (
            "platformInfo",
            "Platform Info",
            [
                ("chassis_serial_number", "Chassis Serial Number", na),
                ("slot_number", "Slot Number", na),
                ("tray_index", "Tray Index", na),
                ("host_id", "Host ID", na),
                ("peer_type", "Peer Type", na),
                ("module_id", "Module Id", str((s["index"] + 3) % 8 + 1)),
                ("gpu_fabric_guid", "GPU Fabric GUID", na),
            ],
        ),
        (
            "inforom_version",
            "Inforom Version",
            [
                ("img_version", "Image Version", m.inforom[0]),
                ("oem_object", "OEM Object", m.inforom[1]),
                ("ecc_object", "ECC Object", m.inforom[2]),
                ("pwr_object", "Power Management Object", m.inforom[3]),
            ],
        ),
        (
            "inforom_bbx_flush",
            "Inforom BBX Object Flush",
            [
                ("latest_timestamp", "Latest Timestamp", na),
                ("latest_duration", "Latest Duration", na),
            ],
        ),
        (
            "gpu_operation_mode",
            "GPU Operation Mode",
            [("current_gom", "Current", na), ("pending_gom", "Pending", na)],
        ),
        ("c2c_mode", "GPU C2C Mode", "Disabled"),
        (
            "gpu_virtualization_mode",
            "GPU Virtualization Mode",
            [
                ("virtualization_mode", "Virtualization Mode", m.virtualization),
                ("host_vgpu_mode", "Host VGPU Mode", na),
                ("vgpu_heterogeneous_mode", "vGPU Heterogeneous Mode", na),
            ],
        ),
        ("gpu_recovery_action", "GPU Recovery Action", "None"),
        ("gsp_firmware_version", "GSP Firmware Version", s["driver"]),
        ("ibmnpu", "IBMNPU", [("relaxed_ordering_mode", "Relaxed Ordering Mode", na)]),
        (
            "pci",
            "PCI",
            [
                ("pci_bus", "Bus", (bus[9:11], "0x" + bus[9:11])),
                ("pci_device", "Device", (bus[12:14], "0x" + bus[12:14])),
                ("pci_domain", "Domain", (bus[4:8], "0x" + bus[4:8])),
                ("pci_base_class", "Base Classcode", ("3", "0x3")),
                ("pci_sub_class", "Sub Classcode", ("2", "0x2")),
                ("pci_device_id", "Device Id", (m.pci_device_id, "0x" + m.pci_device_id)),
                ("pci_bus_id", "Bus Id", bus),
                (
                    "pci_sub_system_id",
                    "Sub System Id",
                    (m.pci_sub_system_id, "0x" + m.pci_sub_system_id),
                ),
                (
                    "pci_gpu_link_info",
                    "GPU Link Info",
                    [
                        (
                            "pcie_gen",
                            "PCIe Generation",
                            [
                                ("max_link_gen", "Max", str(m.pcie_gen)),
                                ("current_link_gen", "Current", str(m.pcie_gen)),
                                ("device_current_link_gen", "Device Current", str(m.pcie_gen)),
                                ("max_device_link_gen", "Device Max", str(m.pcie_gen)),
                                ("max_host_link_gen", "Host Max", na),
                            ],
                        ),
                        (
                            "link_widths",
                            "Link Width",
                            [
                                ("max_link_width", "Max", f"{m.pcie_width}x"),
                                ("current_link_width", "Current", f"{m.pcie_width}x"),
                            ],
                        ),
                    ],
                ),
                (
                    "pci_bridge_chip",
                    "Bridge Chip",
                    [("bridge_chip_type", "Type", na), ("bridge_chip_fw", "Firmware", na)],
                ),
                ("replay_counter", "Replays Since Reset", "0"),
                ("replay_rollover_counter", "Replay Number Rollovers", "0"),
                ("tx_util", "Tx Throughput", f"{s['tx_kbs']} KB/s"),
                ("rx_util", "Rx Throughput", f"{s['rx_kbs']} KB/s"),
                ("atomic_caps_outbound", "Atomic Caps Outbound", na),
                ("atomic_caps_inbound", "Atomic Caps Inbound", na),
            ],
        ),
        ("fan_speed", "Fan Speed", _pct(s["fan"])),
        ("performance_state", "Performance State", s["pstate"]),
        (
            "clocks_event_reasons",
            "Clocks Event Reasons",
            [
                ("clocks_event_reason_gpu_idle", "Idle", act["gpu_idle"]),
                (
                    "clocks_event_reason_applications_clocks_setting",
                    "Applications Clocks Setting",
                    act["applications_clocks_setting"],
                ),
                ("clocks_event_reason_sw_power_cap", "SW Power Cap", act["sw_power_cap"]),
                ("clocks_event_reason_hw_slowdown", "HW Slowdown", act["hw_slowdown"]),
                (
                    "clocks_event_reason_hw_thermal_slowdown",
                    "HW Thermal Slowdown",
                    act["hw_thermal_slowdown"],
                    {"indent": 1},
                ),
                (
                    "clocks_event_reason_hw_power_brake_slowdown",
                    "HW Power Brake Slowdown",
                    act["hw_power_brake_slowdown"],
                    {"indent": 1},
                ),
                ("clocks_event_reason_sync_boost", "Sync Boost", act["sync_boost"]),
                (
                    "clocks_event_reason_sw_thermal_slowdown",
                    "SW Thermal Slowdown",
                    act["sw_thermal_slowdown"],
                ),
                (
                    "clocks_event_reason_display_clocks_setting",
                    "Display Clock Setting",
                    act["display_clock_setting"],
                ),
            ],
        ),
        (
            "clocks_event_reasons_counters",
            "Clocks Event Reasons Counters",
            [
                (
                    "clocks_event_reasons_counters_sw_power_cap",
                    "SW Power Capping",
                    f"{s['sw_power_cap_us']} us",
                ),
                ("clocks_event_reasons_counters_sync_boost", "Sync Boost", "0 us"),
                ("clocks_event_reasons_counters_sw_therm_slowdown", "SW Thermal Slowdown", "0 us"),
                ("clocks_event_reasons_counters_hw_therm_slowdown", "HW Thermal Slowdown", "0 us"),
                ("clocks_event_reasons_counters_hw_power_brake", "HW Power Braking", "0 us"),
            ],
        ),
        ("sparse_operation_mode", "Sparse Operation Mode", "Disabled"),
        (
            "fb_memory_usage",
            "FB Memory Usage",
            [
                ("total", "Total", _mib(s["mem_total"])),
                ("reserved", "Reserved", _mib(s["mem_reserved"])),
                ("used", "Used", _mib(s["mem_used"])),
                ("free", "Free", _mib(s["mem_free"])),
            ],
        ),
        (
            "bar1_memory_usage",
            "BAR1 Memory Usage",
            [
                ("total", "Total", _mib(s["bar1_total"])),
                ("used", "Used", _mib(s["bar1_used"])),
                ("free", "Free", _mib(s["bar1_total"] - s["bar1_used"])),
            ],
        ),
        (
            "cc_protected_memory_usage",
            "Conf Compute Protected Memory Usage",
            [("total", "Total", "0 MiB"), ("used", "Used", "0 MiB"), ("free", "Free", "0 MiB")],
        ),
        ("compute_mode", "Compute Mode", "Default"),
        (
            "utilization",
            "Utilization",
            [
                ("gpu_util", "GPU", _pct(s["util"])),
                ("memory_util", "Memory", _pct(s["mem_util"])),
                ("encoder_util", "Encoder", "0 %"),
                ("decoder_util", "Decoder", "0 %"),
                ("jpeg_util", "JPEG", "0 %"),
                ("ofa_util", "OFA", "0 %"),
            ],
        ),
        (
            "encoder_stats",
            "Encoder Stats",
            [
                ("session_count", "Active Sessions", "0"),
                ("average_fps", "Average FPS", "0"),
                ("average_latency", "Average Latency", "0"),
            ],
        ),
        (
            "fbc_stats",
            "FBC Stats",
            [
                ("session_count", "Active Sessions", "0"),
                ("average_fps", "Average FPS", "0"),
                ("average_latency", "Average Latency", "0"),
            ],
        ),
        (
            "dram_encryption_mode",
            "DRAM Encryption Mode",
            [
                ("current_dram_encryption", "Current", na),
                ("pending_dram_encryption", "Pending", na),
            ],
        ),
        (
            "ecc_mode",
            "ECC Mode",
            [("current_ecc", "Current", _yes(ecc)), ("pending_ecc", "Pending", _yes(ecc))],
        ),
        (
            "ecc_errors",
            "ECC Errors",
            [
                (
                    "volatile",
                    "Volatile",
                    [
                        ("sram_correctable", "SRAM Correctable", zero),
                        ("sram_uncorrectable_parity", "SRAM Uncorrectable Parity", zero),
                        ("sram_uncorrectable_secded", "SRAM Uncorrectable SEC-DED", zero),
                        ("dram_correctable", "DRAM Correctable", zero),
                        ("dram_uncorrectable", "DRAM Uncorrectable", zero),
                    ],
                ),
                (
                    "aggregate",
                    "Aggregate",
                    [
                        ("sram_correctable", "SRAM Correctable", zero),
                        ("sram_uncorrectable_parity", "SRAM Uncorrectable Parity", zero),
                        ("sram_uncorrectable_secded", "SRAM Uncorrectable SEC-DED", zero),
                        ("dram_correctable", "DRAM Correctable", zero),
                        ("dram_uncorrectable", "DRAM Uncorrectable", zero),
                        ("sram_threshold_exceeded", "SRAM Threshold Exceeded", no),
                    ],
                ),
                (
                    "aggregate_uncorrectable_sram_sources",
                    "Aggregate Uncorrectable SRAM Sources",
                    [
                        ("sram_l2", "SRAM L2", zero),
                        ("sram_sm", "SRAM SM", zero),
                        ("sram_microcontroller", "SRAM Microcontroller", zero),
                        ("sram_pcie", "SRAM PCIE", zero),
                        ("sram_other", "SRAM Other", zero),
                    ],
                ),
                ("channel_repair_pending", "Channel Repair Pending", no),
                ("tpc_repair_pending", "TPC Repair Pending", no),
                ("unrepairable_memory", "Unrepairable Memory", no),
            ],
        ),
        (
            "retired_pages",
            "Retired Pages",
            [
                (
                    "multiple_single_bit_retirement",
                    None,
                    [("retired_count", None, na), ("retired_pagelist", None, na)],
                ),
                (
                    "double_bit_retirement",
                    None,
                    [("retired_count", None, na), ("retired_pagelist", None, na)],
                ),
                (None, "Single Bit ECC", na),
                (None, "Double Bit ECC", na),
                ("pending_blacklist", "Pending Page Blacklist", na),
                ("pending_retirement", None, na),
            ],
        ),
        (
            "remapped_rows",
            "Remapped Rows",
            [
                ("remapped_row_corr", "Correctable Error", zero),
                ("remapped_row_corr_inactive", "Inactive Correctable Error", zero),
                ("remapped_row_unc", "Uncorrectable Error", zero),
                ("remapped_row_unc_inactive", "Inactive Uncorrectable Error", zero),
                ("remapped_row_pending", "Pending", no),
                ("remapped_row_failure", "Remapping Failure Occurred", no),
                (
                    "row_remapper_histogram",
                    "Bank Remap Availability Histogram",
                    [
                        ("row_remapper_histogram_max", "Max", "3072 bank(s)" if ecc else na),
                        ("row_remapper_histogram_high", "High", "0 bank(s)" if ecc else na),
                        ("row_remapper_histogram_partial", "Partial", "0 bank(s)" if ecc else na),
                        ("row_remapper_histogram_low", "Low", "0 bank(s)" if ecc else na),
                        ("row_remapper_histogram_none", "None", "0 bank(s)" if ecc else na),
                    ],
                ),
            ],
        ),
        (
            "temperature",
            "Temperature",
            [
                ("gpu_temp", "GPU Current Temp", _cel(s["temp"])),
                (
                    "gpu_temp_tlimit",
                    "GPU T.Limit Temp",
                    _cel(max(1, 87 - s["temp"] - round(3 * s["heat"]))),
                ),
                ("gpu_temp_max_tlimit_threshold", "GPU Shutdown T.Limit Temp", "-8 C"),
                ("gpu_temp_slow_tlimit_threshold", "GPU Slowdown T.Limit Temp", "-2 C"),
                ("gpu_temp_max_gpu_tlimit_threshold", "GPU Max Operating T.Limit Temp", "0 C"),
                ("gpu_target_temperature", "GPU Target Temperature", na),
                ("memory_temp", "Memory Current Temp", _cel(s["mem_temp"])),
                ("gpu_temp_max_mem_tlimit_threshold", "Memory Max Operating T.Limit Temp", "0 C"),
            ],
        ),
        (
            "supported_gpu_target_temp",
            None,
            [("gpu_target_temp_min", None, na), ("gpu_target_temp_max", None, na)],
        ),
        (
            "gpu_power_readings",
            "GPU Power Readings",
            [
                ("power_state", None, s["pstate"]),
                ("average_power_draw", "Average Power Draw", _watts(s["power_avg"])),
                ("instant_power_draw", "Instantaneous Power Draw", _watts(s["power_inst"])),
                ("current_power_limit", "Current Power Limit", _watts(s["power_limit"])),
                ("requested_power_limit", "Requested Power Limit", _watts(s["power_limit"])),
                ("default_power_limit", "Default Power Limit", _watts(s["power_limit"])),
                ("min_power_limit", "Min Power Limit", _watts(m.power_min_w)),
                ("max_power_limit", "Max Power Limit", _watts(s["power_limit"])),
            ],
        ),
        (
            "gpu_memory_power_readings",
            "GPU Memory Power Readings ",
            [
                ("average_power_draw", "Average Power Draw", _watts(s["mem_power"])),
                ("instant_power_draw", "Instantaneous Power Draw", na),
            ],
        ),
        (
            "module_power_readings",
            "Module Power Readings",
            [
                ("power_state", None, s["pstate"]),
                ("average_power_draw", "Average Power Draw", na),
                ("instant_power_draw", "Instantaneous Power Draw", na),
                ("current_power_limit", "Current Power Limit", na),
                ("requested_power_limit", "Requested Power Limit", na),
                ("default_power_limit", "Default Power Limit", na),
                ("min_power_limit", "Min Power Limit", na),
                ("max_power_limit", "Max Power Limit", na),
            ],
        ),
        ("power_smoothing", "Power Smoothing", na),
        (
            "power_profiles",
            "Workload Power Profiles",
            [
                ("power_profile_requested_profiles", "Requested Profiles", na),
                ("power_profile_enforced_profiles", "Enforced Profiles", na),
            ],
        ),
        (
            "clocks",
            "Clocks",
            [
                ("graphics_clock", "Graphics", _mhz(s["sm"])),
                ("sm_clock", "SM", _mhz(s["sm"])),
                ("mem_clock", "Memory", _mhz(s["mem_clk"])),
                ("video_clock", "Video", _mhz(s["video"])),
            ],
        ),
        (
            "applications_clocks",
            "Applications Clocks",
            [
                ("graphics_clock", "Graphics", _mhz(max_sm)),
                ("mem_clock", "Memory", _mhz(m.mem_max_mhz)),
            ],
        ),
        (
            "default_applications_clocks",
            "Default Applications Clocks",
            [
                ("graphics_clock", "Graphics", _mhz(max_sm)),
                ("mem_clock", "Memory", _mhz(m.mem_max_mhz)),
            ],
        ),
        ("deferred_clocks", "Deferred Clocks", [("mem_clock", "Memory", na)]),
        (
            "max_clocks",
            "Max Clocks",
            [
                ("graphics_clock", "Graphics", _mhz(max_sm)),
                ("sm_clock", "SM", _mhz(max_sm)),
                ("mem_clock", "Memory", _mhz(m.mem_max_mhz)),
                ("video_clock", "Video", _mhz(m.video_max_mhz)),
            ],
        ),
        (
            "max_customer_boost_clocks",
            "Max Customer Boost Clocks",
            [("graphics_clock", "Graphics", _mhz(max_sm))],
        ),
        (
            "clock_policy",
            "Clock Policy",
            [("auto_boost", "Auto Boost", na), ("auto_boost_default", "Auto Boost Default", na)],
        ),
        (
            "fabric",
            "Fabric",
            [
                ("state", "State", na),
                ("status", "Status", na),
                ("cliqueId", "CliqueId", na),
                ("clusterUuid", "ClusterUUID", na),
                (
                    "health",
                    "Health",
                    [
                        ("summary", "Summary", na),
                        ("bandwidth", "Bandwidth", na),
                        ("route_recovery_in_progress", "Route Recovery in progress", na),
                        ("route_unhealthy", "Route Unhealthy", na),
                        ("access_timeout_recovery", "Access Timeout Recovery", na),
                        ("incorrect_configuration", "Incorrect Configuration", na),
                        ("partition_assigned", "Partition Assigned", na),
                    ],
                ),
            ],
        ),
        ("supported_clocks", None, supported),
        ("processes", "Processes", procs, {"width": 42, "empty": "None"}),
        ("accounted_processes", None, []),
        ("capabilities", "Capabilities", [("egm", "EGM", "disabled")]),
    ]


# -d TYPE -> the top-level sections it shows
_DISPLAY = {
    "MEMORY": ("fb_memory_usage", "bar1_memory_usage", "cc_protected_memory_usage"),
    "UTILIZATION": ("utilization",),
    "ECC": ("ecc_mode", "ecc_errors"),
    "TEMPERATURE": ("temperature",),
    "POWER": (
        "gpu_power_readings",
        "gpu_memory_power_readings",
        "module_power_readings",
        "power_smoothing",
        "power_profiles",
    ),
    "CLOCK": (
        "clocks",
        "applications_clocks",
        "default_applications_clocks",
        "deferred_clocks",
        "max_clocks",
        "max_customer_boost_clocks",
        "clock_policy",
    ),
    "COMPUTE": ("compute_mode",),
    "PIDS": ("processes",),
    "PERFORMANCE": ("performance_state", "clocks_event_reasons", "clocks_event_reasons_counters"),
    "SUPPORTED_CLOCKS": ("supported_clocks",),
    "PAGE_RETIREMENT": ("retired_pages",),
    "ROW_REMAPPER": ("remapped_rows",),
    "ACCOUNTING": ("accounting_mode", "accounting_mode_buffer_size"),
}


def _select(tree: list, display: tuple[str, ...] | None) -> list:
    if not display:
        return tree
    wanted = {tag for d in display for tag in _DISPLAY[d]}
    return [n for n in tree if n[0] in wanted]


def _xml_escape(v: str) -> str:
    return v.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _xml_nodes(nodes: list, depth: int, out: list[str]) -> None:
    ind = "\t" * depth
    for node in nodes:
        tag, _label, val = node[0], node[1], node[2]
        if tag is None:
            continue
        if isinstance(val, list):
            out.append(f"{ind}<{tag}>\n")
            _xml_nodes(val, depth + 1, out)
            out.append(f"{ind}</{tag}>\n")
        elif isinstance(val, _Raw):
            out.append(f"{ind}<{tag}>\n{ind}\t{_xml_escape(val)}\n{ind}</{tag}>\n")
        else:
            v = val[0] if isinstance(val, tuple) else val
            out.append(f"{ind}<{tag}>{_xml_escape(v)}</{tag}>\n")


def _text_nodes(nodes: list, depth: int, out: list[str], width: int = 55) -> None:
    for node in nodes:
        label, val = node[1], node[2]
        opts = node[3] if len(node) > 3 else {}
        if label is None:
            continue
        ind = "    " * (depth + opts.get("indent", 0))
        w = opts.get("width", width)
        if isinstance(val, list):
            if opts.get("flatten"):
                _text_nodes(val, depth, out, width)
                continue
            if not val and "empty" in opts:
                out.append(f"{ind}{label:<{55 - len(ind)}}: {opts['empty']}\n")
                continue
            out.append(f"{ind}{label}\n")
            _text_nodes(val, depth + 1, out, w)
        else:
            v = val[1] if isinstance(val, tuple) else val
            out.append(f"{ind}{label:<{width - len(ind)}}: {v}\n")


def render_xml(
    states: list[dict],
    *,
    driver: str,
    cuda: str,
    now: float,
    attached: int,
    display: tuple[str, ...] | None = None,
) -> str:
    out = [
        '<?xml version="1.0" ?>\n',
        '<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v13.dtd">\n',
        "<nvidia_smi_log>\n",
        f"\t<timestamp>{_fmt_time(now)}</timestamp>\n",
        f"\t<driver_version>{_xml_escape(driver)}</driver_version>\n",
        f"\t<cuda_version>{_xml_escape(cuda)}</cuda_version>\n",
        f"\t<attached_gpus>{attached}</attached_gpus>\n",
    ]
    for s in states:
        out.append(f'\t<gpu id="{s["bus_id"]}">\n')
        _xml_nodes(_select(_gpu_tree(s), display), 2, out)
        out.append("\t</gpu>\n\n")
    out.append("</nvidia_smi_log>\n")
    return "".join(out)


def render_text_query(
    states: list[dict],
    *,
    driver: str,
    cuda: str,
    now: float,
    attached: int,
    display: tuple[str, ...] | None = None,
) -> str:
    def kv(k: str, v: object) -> str:
        return f"{k:<55}: {v}\n"

    out = [
        "\n==============NVSMI LOG==============\n\n",
        kv("Timestamp", _fmt_time(now)),
        kv("Driver Version", driver),
        kv("CUDA Version", cuda),
        "\n",
        kv("Attached GPUs", attached),
    ]
    for s in states:
        out.append(f"GPU {s['bus_id']}\n")
        _text_nodes(_select(_gpu_tree(s), display), 1, out)
        out.append("\n")
    return "".join(out)


# =========================================================================== CLI

_HELP = """NVIDIA System Management Interface -- v{driver}

NVSMI provides monitoring information for Tesla and select Quadro devices.
(simulated: a subset of the real options)

nvidia-smi [OPTION1 [ARG1]] [OPTION2 [ARG2]] ...

    -h,   --help                Print usage information and exit.
    -L,   --list-gpus           Display a list of GPUs connected to the system.
    -q,   --query               Display GPU or Unit info.
    -x,   --xml-format          Produce XML output (with -q).
    -d,   --display=            Display only selected information (with -q).
    -i,   --id=                 Target a specific GPU.
    -l,   --loop=               Probe until Ctrl+C at specified second interval.
    -lms, --loop-ms=            Probe until Ctrl+C at specified millisecond interval.
    --query-gpu=                Information about GPU (with --format).
    --query-compute-apps=       List of currently active compute processes.
    --format=                   csv[,noheader][,nounits]
"""


def _unrecognized(opt: str) -> _CliError:
    return _CliError(
        f"ERROR: Option {opt} is not recognized. Please run 'nvidia-smi -h'.\n", EXIT_INVALID_ARG
    )


def _invalid() -> _CliError:
    return _CliError(INVALID_COMBINATION_TEXT, EXIT_INVALID_ARG)


_LONG_WITH_VALUE = {
    "--query-gpu": "query_gpu",
    "--query-compute-apps": "query_apps",
    "--format": "format",
    "--id": "id",
    "--loop": "loop",
    "--loop-ms": "loop_ms",
    "--display": "display",
}
_LONG_FLAGS = {
    "--query": "q",
    "--xml-format": "x",
    "--list-gpus": "L",
    "--help": "h",
    "--version": "version",
}
_SHORT_FLAGS = {"-q": "q", "-x": "x", "-L": "L", "-h": "h"}
_SHORT_WITH_VALUE = {"-i": "id", "-d": "display", "-lms": "loop_ms"}


def parse_args(argv: list[str]) -> dict:
    """Parse like nvidia-smi does (the subset the simulation supports); raises _CliError."""
    opts: dict = {}
    i = 0
    while i < len(argv):
        a = argv[i]
        i += 1
        if a.startswith("--"):
            key, eq, val = a.partition("=")
            if key in _LONG_FLAGS and not eq:
                opts[_LONG_FLAGS[key]] = True
                continue
            if key in _LONG_WITH_VALUE:
                name = _LONG_WITH_VALUE[key]
                if not eq:
                    if key == "--loop" and (i >= len(argv) or not argv[i].isdigit()):
                        opts[name] = "5"
                        continue
                    if i >= len(argv):
                        raise _invalid()
                    val = argv[i]
                    i += 1
                opts[name] = val
                continue
            raise _unrecognized(a)
        if a in _SHORT_FLAGS:
            opts[_SHORT_FLAGS[a]] = True
            continue
        if a == "-l":
            if i < len(argv) and argv[i].isdigit():
                opts["loop"] = argv[i]
                i += 1
            else:
                opts["loop"] = "5"
            continue
        if a in _SHORT_WITH_VALUE:
            if i >= len(argv):
                raise _invalid()
            opts[_SHORT_WITH_VALUE[a]] = argv[i]
            i += 1
            continue
        if a.startswith("-i") and len(a) > 2:  # -i0
            opts["id"] = a[2:].lstrip("=")
            continue
        if a in ("-qx", "-xq"):
            opts["q"] = opts["x"] = True
            continue
        raise _unrecognized(a)

    query = "query_gpu" in opts or "query_apps" in opts
    if "query_gpu" in opts and "query_apps" in opts:
        raise _invalid()
    if opts.get("L") and (query or opts.get("q")):
        raise _invalid()
    if query and opts.get("q"):
        raise _invalid()
    if "format" in opts and not query:
        raise _invalid()
    if query:
        tokens = [t.strip() for t in opts.get("format", "").split(",") if t.strip()]
        if "csv" not in tokens or any(t not in ("csv", "noheader", "nounits") for t in tokens):
            raise _invalid()
        opts["header"] = "noheader" not in tokens
        opts["units"] = "nounits" not in tokens
    if opts.get("x") and not opts.get("q"):
        raise _invalid()
    if "display" in opts:
        if not opts.get("q"):
            raise _invalid()
        types = tuple(t.strip().upper() for t in opts["display"].split(",") if t.strip())
        if not types or any(t not in _DISPLAY for t in types):
            raise _invalid()
        opts["display"] = types
    period = None
    if "loop_ms" in opts:
        if not str(opts["loop_ms"]).isdigit():
            raise _invalid()
        period = max(1, int(opts["loop_ms"])) / 1000.0
    elif "loop" in opts:
        if not str(opts["loop"]).isdigit():
            raise _invalid()
        period = max(1, int(opts["loop"]))
    opts["period"] = period
    return opts


def _select_gpus(states: list[dict], spec: str | None) -> list[dict]:
    if spec is None:
        return states
    chosen = []
    for tok in spec.split(","):
        tok = tok.strip()
        match = None
        for s in states:
            if (
                tok == str(s["index"])
                or tok == s["uuid"]
                or tok.upper() in (s["bus_id"], s["bus_id"][4:])
            ):
                match = s
                break
        if match is None:
            raise _CliError(NO_DEVICES_TEXT, EXIT_NOT_FOUND)
        if match not in chosen:
            chosen.append(match)
    return chosen


def find_root(root: str | None = None) -> str | None:
    if root:
        return os.fspath(root)
    env = os.environ.get("SGLSIM_ROOT")
    if env:
        return env
    prog = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    bindir = os.path.dirname(prog)
    if os.path.basename(bindir) == "bin":
        candidate = os.path.dirname(bindir)
        if os.path.isfile(gpustate.host_path(candidate)):
            return candidate
    return None


def _garbage(now: float) -> str:
    nz = noise
    junk = [
        f"\x1b[31m?? NVML: unexpected response 0x{int((nz(now, 1) + 1) * 2**31):08x}\x1b[0m",
        "0, GPU-",
        "GPU 0: <<<<<<<<< ???",
        f"ÿþ\x07 nvidia nvidia nvidia ;;;; {int(now)}",
        "index; uuid; name",
        "-" * (int((nz(now, 2) + 1) * 30) + 1),
    ]
    return "\n".join(junk) + "\n"


class _Out:
    def __init__(self) -> None:
        self.stream = sys.stdout

    def write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()


def main(argv: list[str] | None = None, root: str | None = None) -> int:
    """Run the simulated nvidia-smi; returns its exit code."""
    import signal

    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # die quietly like a C program
    args = sys.argv[1:] if argv is None else list(argv)
    out = _Out()
    try:
        return _run(args, find_root(root), out)
    except KeyboardInterrupt:
        return 0
    except BrokenPipeError:  # pragma: no cover - SIGPIPE is SIG_DFL
        try:
            sys.stdout = None  # type: ignore[assignment]
        except Exception:  # noqa: BLE001
            pass
        return 0


def _mode_failure(host: dict, out: _Out) -> int | None:
    """Apply host.json's nvidia_smi fault mode; None means behave normally."""
    mode = host.get("nvidia_smi", "ok")
    if mode == "hang":
        while True:
            time.sleep(3600)
    if mode == "no_driver":
        out.write(NO_DRIVER_TEXT)
        return EXIT_NO_DRIVER
    if mode == "fail":
        m = get_model(host.get("gpu_model"))
        out.write(
            f"Unable to determine the device handle for GPU{gpu_bus_id(m, 0)[4:]}: Unknown Error\n"
        )
        return EXIT_GPU_LOST
    if mode == "garbage":
        out.write(_garbage(time.time()))
        return 0
    if mode == "empty":
        return 0
    return None


def _run(args: list[str], root: str | None, out: _Out) -> int:
    if root is None:
        out.write(NO_DRIVER_TEXT)
        return EXIT_NO_DRIVER
    host = gpustate.load_host(root)
    code = _mode_failure(host, out)
    if code is not None:
        return code
    try:
        opts = parse_args(args)
    except _CliError as e:
        out.write(e.text)
        return e.code
    driver = str(host.get("driver_version", "580.159.04"))
    cuda = str(host.get("cuda_version", "13.0"))
    if opts.get("h"):
        out.write(_HELP.format(driver=driver))
        return 0
    if opts.get("version"):
        out.write(
            f"NVIDIA-SMI version  : {driver}\nNVML version        : {driver.rsplit('.', 1)[0]}\n"
            f"DRIVER version      : {driver}\nCUDA Version        : {cuda}\n"
        )
        return 0

    fields: list[str] = []
    try:
        if "query_gpu" in opts:
            fields = _resolve_fields(opts["query_gpu"], _GPU_FIELDS, _GPU_ALIASES)
        elif "query_apps" in opts:
            fields = _resolve_fields(opts["query_apps"], _APP_FIELDS, _APP_ALIASES)
    except _CliError as e:
        out.write(e.text)
        return e.code

    period = opts["period"]
    first = True
    next_at = time.monotonic()
    while True:
        now = time.time()
        if not first:
            host = gpustate.load_host(root)
            code = _mode_failure(host, out)
            if code is not None:
                return code
        states = gpu_states(host, gpustate.read_gpu_uses(root), now)
        try:
            chosen = _select_gpus(states, opts.get("id"))
        except _CliError as e:
            out.write(e.text)
            return e.code
        if not states:
            out.write(NO_DEVICES_TEXT)
            return EXIT_NOT_FOUND
        out.write(_render_once(opts, fields, chosen, len(states), driver, cuda, now, first))
        first = False
        if period is None:
            return 0
        next_at += period
        delay = next_at - time.monotonic()
        if delay < 0:  # fell behind (suspended?): restart the schedule
            next_at = time.monotonic()
            delay = 0
        time.sleep(delay)


def _render_once(
    opts: dict,
    fields: list[str],
    chosen: list[dict],
    attached: int,
    driver: str,
    cuda: str,
    now: float,
    first: bool,
) -> str:
    if "query_gpu" in opts:
        lines = render_query_gpu(chosen, fields, units=opts["units"])
        if opts["header"] and first:
            lines.insert(0, gpu_query_header(fields))
        return "".join(line + "\n" for line in lines)
    if "query_apps" in opts:
        lines = render_compute_apps(chosen, fields, units=opts["units"])
        if opts["header"] and first:
            lines.insert(0, apps_query_header(fields))
        return "".join(line + "\n" for line in lines)
    if opts.get("L"):
        return render_list(chosen)
    if opts.get("q"):
        render = render_xml if opts.get("x") else render_text_query
        return render(
            chosen,
            driver=driver,
            cuda=cuda,
            now=now,
            attached=attached,
            display=opts.get("display"),
        )
    return render_table(chosen, driver=driver, cuda=cuda, now=now)


if __name__ == "__main__":
    raise SystemExit(main())
