"""How nvidia-smi prints values: timestamps, units, throttle reasons.

Shared by the simulated ``--query-*`` CSV, table and ``-q`` report renderers.
"""

from __future__ import annotations

import time

# clocks event (throttle) reason -> its bit in the simulated state's ``reasons`` mask
REASON_BITS = (
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


def format_clock_time(when: float) -> str:
    """``Wed Dec  2 12:18:41 2026`` (the table / -q timestamp)."""
    local = time.localtime(when)
    day = f"{local.tm_mday:>2} "
    return time.strftime("%a %b ", local) + day + time.strftime("%H:%M:%S %Y", local)


def format_query_time(when: float) -> str:
    """``2026/12/02 12:18:41.123`` (the ``timestamp`` query field)."""
    local = time.localtime(when)
    return time.strftime("%Y/%m/%d %H:%M:%S", local) + f".{int((when % 1) * 1000):03d}"


def yes(flag) -> str:
    return "Enabled" if flag else "Disabled"


def in_mib(value) -> str:
    return "N/A" if value is None else f"{value} MiB"


def in_mhz(value) -> str:
    return "N/A" if value is None else f"{value} MHz"


def in_watts(value) -> str:
    return "N/A" if value is None else f"{value:.2f} W"


def in_celsius(value) -> str:
    return "N/A" if value is None else f"{value} C"


def in_percent(value) -> str:
    return "N/A" if value is None else f"{value} %"
