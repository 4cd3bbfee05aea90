"""``nvidia-smi -q`` (text) and ``-q -x`` (XML): the per-GPU report.

One tree renders both the XML (tags) and the text (labels). The tree is data,
``data/smi_report_tree.json``, transcribed from the real H200 captures
(tests/fixtures/nvidia-smi/h200/q-loaded.xml and q-loaded.txt, which the tests
compare the output against). Node: ``[tag, label, value, opts?]``; tag null ->
text only, label null -> XML only. Value: a string; ``{"value": NAME}`` (a
reading of the GPU, from ``report_values``); ``{"xml": .., "text": ..}`` (shown
differently in each); ``{"raw": TEXT}`` (XML: text on its own line); ``{"insert":
"procs" | "supported"}`` (generated groups); or a list of child nodes. opts:
indent (extra text indent levels), width (text key column), flatten (text:
children shown without a heading), empty (text for an empty group).
"""

from __future__ import annotations

from functools import cache

from sglconsole.sim.nvidia_smi.format import (
    REASON_BITS,
    format_clock_time,
    in_celsius,
    in_mhz,
    in_mib,
    in_percent,
    in_watts,
    yes,
)

_NA = "N/A"


class _Raw(str):
    """Text placed on its own line inside an XML element (``<mig_devices>\\n None``)."""


@cache
def _tree_template() -> list:
    # imported here: only -q pays for them (the CSV query runs every few seconds per host)
    import json
    from importlib import resources

    text = (
        resources.files("sglconsole.sim.nvidia_smi")
        .joinpath("data/smi_report_tree.json")
        .read_text()
    )
    return json.loads(text)


def report_values(state: dict) -> dict[str, str]:
    """The readings the report tree names with ``{"value": NAME}``, for one GPU."""
    model = state["model"]
    bus_id = state["bus_id"]
    ecc = model.ecc
    missing = _NA
    zero = "0" if ecc else missing
    ecc_flag = "No" if ecc else missing
    reasons = {
        name: ("Active" if state["reasons"] & bit else "Not Active") for name, bit in REASON_BITS
    }
    max_sm = model.sm_max_mhz
    return {
        "product_name": state["name"],
        "product_brand": model.brand,
        "product_architecture": model.architecture,
        "display_attached": model.display_attached,
        "persistence_mode": yes(model.persistence),
        "mig_mode": state["mig"] or missing,
        "serial": state["serial"],
        "uuid": state["uuid"],
        "pdi": "0x" + state["uuid"][4:12] + state["uuid"][-8:],
        "minor_number": str(state["index"]),
        "vbios_version": model.vbios,
        "board_id": "0x" + f"{int(bus_id[9:11], 16) << 8 | int(bus_id[12:14], 16):x}",
        "board_part_number": model.board_part,
        "gpu_part_number": model.gpu_part,
        "module_id": str((state["index"] + 3) % 8 + 1),
        "inforom_image": model.inforom[0],
        "inforom_oem": model.inforom[1],
        "inforom_ecc": model.inforom[2],
        "inforom_power": model.inforom[3],
        "virtualization_mode": model.virtualization,
        "gsp_firmware_version": state["driver"],
        "bus": bus_id[9:11],
        "bus_hex": "0x" + bus_id[9:11],
        "device": bus_id[12:14],
        "device_hex": "0x" + bus_id[12:14],
        "domain": bus_id[4:8],
        "domain_hex": "0x" + bus_id[4:8],
        "device_id": model.pci_device_id,
        "device_id_hex": "0x" + model.pci_device_id,
        "bus_id": bus_id,
        "sub_system_id": model.pci_sub_system_id,
        "sub_system_id_hex": "0x" + model.pci_sub_system_id,
        "pcie_gen": str(model.pcie_gen),
        "pcie_width": f"{model.pcie_width}x",
        "pcie_tx": f"{state['tx_kbs']} KB/s",
        "pcie_rx": f"{state['rx_kbs']} KB/s",
        "fan_speed": in_percent(state["fan"]),
        "performance_state": state["pstate"],
        "reason.gpu_idle": reasons["gpu_idle"],
        "reason.applications_clocks_setting": reasons["applications_clocks_setting"],
        "reason.sw_power_cap": reasons["sw_power_cap"],
        "reason.hw_slowdown": reasons["hw_slowdown"],
        "reason.hw_thermal_slowdown": reasons["hw_thermal_slowdown"],
        "reason.hw_power_brake_slowdown": reasons["hw_power_brake_slowdown"],
        "reason.sync_boost": reasons["sync_boost"],
        "reason.sw_thermal_slowdown": reasons["sw_thermal_slowdown"],
        "reason.display_clock_setting": reasons["display_clock_setting"],
        "sw_power_cap_time": f"{state['sw_power_cap_us']} us",
        "fb_total": in_mib(state["mem_total"]),
        "fb_reserved": in_mib(state["mem_reserved"]),
        "fb_used": in_mib(state["mem_used"]),
        "fb_free": in_mib(state["mem_free"]),
        "bar1_total": in_mib(state["bar1_total"]),
        "bar1_used": in_mib(state["bar1_used"]),
        "bar1_free": in_mib(state["bar1_total"] - state["bar1_used"]),
        "gpu_util": in_percent(state["util"]),
        "memory_util": in_percent(state["mem_util"]),
        "ecc_mode": yes(ecc),
        "ecc_count": zero,
        "ecc_flag": ecc_flag,
        "banks_max": "3072 bank(s)" if ecc else missing,
        "banks_other": "0 bank(s)" if ecc else missing,
        "gpu_temp": in_celsius(state["temp"]),
        "gpu_temp_tlimit": in_celsius(max(1, 87 - state["temp"] - round(3 * state["heat"]))),
        "memory_temp": in_celsius(state["mem_temp"]),
        "power_average": in_watts(state["power_avg"]),
        "power_instant": in_watts(state["power_inst"]),
        "power_limit": in_watts(state["power_limit"]),
        "power_limit_min": in_watts(model.power_min_w),
        "memory_power": in_watts(state["mem_power"]),
        "clock_graphics": in_mhz(state["sm"]),
        "clock_memory": in_mhz(state["mem_clk"]),
        "clock_video": in_mhz(state["video"]),
        "clock_graphics_max": in_mhz(max_sm),
        "clock_memory_max": in_mhz(model.mem_max_mhz),
        "clock_video_max": in_mhz(model.video_max_mhz),
    }


def _process_nodes(state: dict) -> list:
    return [
        [
            "process_info",
            "",
            [
                ["gpu_instance_id", "GPU instance ID", _NA],
                ["compute_instance_id", "Compute instance ID", _NA],
                ["pid", "Process ID", str(pid)],
                ["type", "Type", "C", {"indent": 1}],
                ["process_name", "Name", process_name, {"indent": 1}],
                ["used_memory", "Used GPU Memory", in_mib(used_mib), {"indent": 1}],
            ],
            {"flatten": True},
        ]
        for pid, process_name, used_mib in state["procs"]
    ]


def _supported_clock_nodes(state: dict) -> list:
    model = state["model"]
    return [
        [
            "supported_mem_clock",
            None,
            [["value", None, in_mhz(memory_clock)]]
            + [
                ["supported_graphics_clock", None, in_mhz(graphics_clock)]
                for graphics_clock in model.supported_gr_clocks
            ],
        ]
        for memory_clock in model.supported_mem_clocks
    ]


def _fill(nodes: list, values: dict[str, str], inserts: dict[str, list]) -> list:
    """The template nodes with their values: (tag, label, value[, opts]) tuples."""
    filled = []
    for node in nodes:
        tag, label, value = node[0], node[1], node[2]
        if isinstance(value, list):
            value = _fill(value, values, inserts)
        elif isinstance(value, dict):
            if "value" in value:
                value = values[value["value"]]
            elif "raw" in value:
                value = _Raw(value["raw"])
            elif "insert" in value:
                value = inserts[value["insert"]]
            else:
                value = (_leaf(value["xml"], values), _leaf(value["text"], values))
        filled.append((tag, label, value, *node[3:]))
    return filled


def _leaf(value: str | dict, values: dict[str, str]) -> str:
    return values[value["value"]] if isinstance(value, dict) else value


def gpu_report_tree(state: dict) -> list:
    """The report tree of one GPU: (tag, label, value[, opts]) nodes."""
    inserts = {
        "procs": _fill(_process_nodes(state), {}, {}),
        "supported": _fill(_supported_clock_nodes(state), {}, {}),
    }
    return _fill(_tree_template(), report_values(state), inserts)


# -d TYPE -> the top-level sections it shows
DISPLAY_SECTIONS = {
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
    wanted = {tag for section in display for tag in DISPLAY_SECTIONS[section]}
    return [node for node in tree if node[0] in wanted]


def _xml_escape(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


def _xml_nodes(nodes: list, depth: int, out: list[str]) -> None:
    indent = "\t" * depth
    for node in nodes:
        tag, _label, val = node[0], node[1], node[2]
        if tag is None:
            continue
        if isinstance(val, list):
            out.append(f"{indent}<{tag}>\n")
            _xml_nodes(val, depth + 1, out)
            out.append(f"{indent}</{tag}>\n")
        elif isinstance(val, _Raw):
            out.append(f"{indent}<{tag}>\n{indent}\t{_xml_escape(val)}\n{indent}</{tag}>\n")
        else:
            shown = val[0] if isinstance(val, tuple) else val
            out.append(f"{indent}<{tag}>{_xml_escape(shown)}</{tag}>\n")


def _text_nodes(nodes: list, depth: int, out: list[str], width: int = 55) -> None:
    for node in nodes:
        label, val = node[1], node[2]
        opts = node[3] if len(node) > 3 else {}
        if label is None:
            continue
        indent = "    " * (depth + opts.get("indent", 0))
        child_width = opts.get("width", width)
        if isinstance(val, list):
            if opts.get("flatten"):
                _text_nodes(val, depth, out, width)
                continue
            if not val and "empty" in opts:
                out.append(f"{indent}{label:<{55 - len(indent)}}: {opts['empty']}\n")
                continue
            out.append(f"{indent}{label}\n")
            _text_nodes(val, depth + 1, out, child_width)
        else:
            shown = val[1] if isinstance(val, tuple) else val
            out.append(f"{indent}{label:<{width - len(indent)}}: {shown}\n")


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
        f"\t<timestamp>{format_clock_time(now)}</timestamp>\n",
        f"\t<driver_version>{_xml_escape(driver)}</driver_version>\n",
        f"\t<cuda_version>{_xml_escape(cuda)}</cuda_version>\n",
        f"\t<attached_gpus>{attached}</attached_gpus>\n",
    ]
    for state in states:
        out.append(f'\t<gpu id="{state["bus_id"]}">\n')
        _xml_nodes(_select(gpu_report_tree(state), display), 2, out)
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
    def line(key: str, value: object) -> str:
        return f"{key:<55}: {value}\n"

    out = [
        "\n==============NVSMI LOG==============\n\n",
        line("Timestamp", format_clock_time(now)),
        line("Driver Version", driver),
        line("CUDA Version", cuda),
        "\n",
        line("Attached GPUs", attached),
    ]
    for state in states:
        out.append(f"GPU {state['bus_id']}\n")
        _text_nodes(_select(gpu_report_tree(state), display), 1, out)
        out.append("\n")
    return "".join(out)
