"""Per-model constants of the simulated GPUs (stdlib only, cheap to import).

H200 values come from the real captures in tests/fixtures/nvidia-smi/h200/
(driver 580.159.04): 143771 MiB, 700 W, P0 even when idle (~123 W, 38 C,
1980 MHz SM as the query sees it, clocks_event_reasons 0x1), power-capped at
full load (~692-697 W, 56-60 C, SM 1455-1515 MHz, reason 0x4 sw_power_cap),
memory clock 3201 MHz, fan ``[N/A]``, ECC on, MIG capable (Disabled).

RTX A6000 values from public nvidia-smi captures: 49140 MiB, 300 W limit
(min 100 W), P8 idle at 210/405 MHz and ~20-30 W, max clocks 2100/8001 MHz,
fan in %, ECC off by default, no MIG.
"""

from __future__ import annotations

import zlib

__all__ = ["MODELS", "get_model", "gpu_uuid", "gpu_serial", "gpu_bus_id", "noise"]


class GpuModel:
    """Plain attribute bag (no dataclasses: keeps the simulated CLI's startup cheap)."""

    def __init__(self, **attributes) -> None:
        self.__dict__.update(attributes)

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"GpuModel({self.key})"


H200 = GpuModel(
    key="H200",
    name="NVIDIA H200",
    brand="NVIDIA",
    architecture="Hopper",
    compute_cap="9.0",
    mem_total_mib=143771,
    mem_reserved_mib=616,  # what -q shows as Reserved
    mem_free_gap_mib=615,  # total - used - free, as the query shows it (idle)
    mem_free_gap_busy_mib=614,  # ... and with processes holding memory
    mem_idle_used_mib=0,
    mem_ctx_base_mib=3,  # used = sum(process memory) + base + per-process
    mem_ctx_per_proc_mib=6,  # (21482 -> 21491 with one, 16396 -> 16411 with two)
    bar1_total_mib=262144,
    power_limit_w=700.0,
    power_min_w=200.0,
    power_idle_w=123.5,
    power_full_w=694.0,
    mem_power_idle_w=50.0,
    mem_power_full_w=129.0,
    temp_idle_c=38,
    temp_full_c=58,
    mem_temp_delta_c=-7,  # memory temp relative to GPU temp under load
    fan=False,
    fan_idle_pct=None,
    fan_max_pct=None,
    sm_idle_mhz=1980,
    sm_busy_mhz=1980,
    sm_capped_mhz=1485,
    sm_max_mhz=1980,
    mem_idle_mhz=3201,
    mem_busy_mhz=3201,
    mem_max_mhz=3201,
    video_idle_mhz=765,
    video_busy_mhz=1515,
    video_max_mhz=1545,
    pstate_idle="P0",
    pstate_busy="P0",
    mem_util_ratio=0.23,
    ecc=True,
    mig=True,
    persistence=True,
    pcie_gen=5,
    pcie_width=16,
    pci_device_id="233510DE",
    pci_sub_system_id="18BF10DE",
    vbios="96.00.A5.00.1A",
    board_part="692-2G520-0282-001",
    gpu_part="2335-895-A1",
    inforom=("G520.0282.02.02", "2.1", "7.16", "N/A"),
    virtualization="Pass-Through",
    display_attached="Yes",
    # a pass-through VM as captured: the GPU sits at 00:06.0; more GPUs follow it
    bus_ids=tuple(f"00000000:00:{6 + slot:02X}.0" for slot in range(16)),
    supported_mem_clocks=(3201, 2201),
    supported_gr_clocks=tuple(range(1980, 344, -15)),
)

A6000 = GpuModel(
    key="A6000",
    name="NVIDIA RTX A6000",
    brand="NVIDIA RTX",
    architecture="Ampere",
    compute_cap="8.6",
    mem_total_mib=49140,
    mem_reserved_mib=396,
    mem_free_gap_mib=396,
    mem_free_gap_busy_mib=396,
    mem_idle_used_mib=1,
    mem_ctx_base_mib=3,
    mem_ctx_per_proc_mib=6,
    bar1_total_mib=256,
    power_limit_w=300.0,
    power_min_w=100.0,
    power_idle_w=22.0,
    power_full_w=297.0,
    mem_power_idle_w=None,
    mem_power_full_w=None,
    temp_idle_c=32,
    temp_full_c=82,
    mem_temp_delta_c=None,
    fan=True,
    fan_idle_pct=30,
    fan_max_pct=78,
    sm_idle_mhz=210,
    sm_busy_mhz=1980,
    sm_capped_mhz=1695,
    sm_max_mhz=2100,
    mem_idle_mhz=405,
    mem_busy_mhz=7601,
    mem_max_mhz=8001,
    video_idle_mhz=555,
    video_busy_mhz=1650,
    video_max_mhz=1950,
    pstate_idle="P8",
    pstate_busy="P2",
    mem_util_ratio=0.35,
    ecc=False,
    mig=False,
    persistence=True,
    pcie_gen=4,
    pcie_width=16,
    pci_device_id="223010DE",
    pci_sub_system_id="145910DE",
    vbios="94.02.5C.00.02",
    board_part="900-5G133-1700-000",
    gpu_part="2230-875-A1",
    inforom=("G133.0500.00.05", "2.0", "6.16", "N/A"),
    virtualization="None",
    display_attached="No",
    # a 4/8-GPU workstation/server, in PCI (= nvidia-smi index) order
    bus_ids=(
        "00000000:17:00.0",
        "00000000:31:00.0",
        "00000000:4B:00.0",
        "00000000:65:00.0",
        "00000000:98:00.0",
        "00000000:B1:00.0",
        "00000000:CA:00.0",
        "00000000:E3:00.0",
    )
    + tuple(f"00000000:F{slot:X}:00.0" for slot in range(8)),
    supported_mem_clocks=(8001, 7601, 5001, 810, 405),
    supported_gr_clocks=tuple(range(2100, 209, -15)),
)

MODELS: dict[str, GpuModel] = {"H200": H200, "A6000": A6000}
_ALIASES = {
    "H200": "H200",
    "NVIDIA H200": "H200",
    "A6000": "A6000",
    "RTX A6000": "A6000",
    "NVIDIA RTX A6000": "A6000",
}  # keys upper-case


def get_model(name: str | None) -> GpuModel:
    """The model for a host.json ``gpu_model`` (case-insensitive; unknown -> H200)."""
    key = _ALIASES.get(str(name or "H200").strip().upper(), "H200")
    return MODELS[key]


def _h32(*parts: object) -> int:
    return zlib.crc32(":".join(str(part) for part in parts).encode()) & 0xFFFFFFFF


def gpu_uuid(seed: str, index: int) -> str:
    """Deterministic ``GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`` for (seed, index)."""
    digits = "".join(f"{_h32('uuid', seed, index, chunk):08x}" for chunk in range(4))
    return f"GPU-{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:32]}"


def gpu_serial(seed: str, index: int) -> str:
    return "1654" + f"{_h32('serial', seed, index) % 10**9:09d}"


def gpu_bus_id(model: GpuModel, index: int) -> str:
    if 0 <= index < len(model.bus_ids):
        return model.bus_ids[index]
    return f"00000000:{0x80 + index % 0x70:02X}:00.0"


def noise(*parts: object) -> float:
    """Deterministic pseudo-random in [-1, 1) from ``parts``."""
    return _h32("noise", *parts) / 2**31 - 1.0
