"""The simulated GPUs' readings: what every nvidia-smi output of a host renders.

Deterministic for a host's settings, its registered GPU uses and the time.
"""

from __future__ import annotations

import time

from sglconsole.sim.gpu_models import get_model, gpu_bus_id, gpu_serial, gpu_uuid, noise


def _clamp(value: float, low: float = 0.0, high: float = 1.0) -> float:
    return low if value < low else high if value > high else value


def gpu_states(host: dict, uses: list[dict], now: float | None = None) -> list[dict]:
    """The simulated GPUs' readings at ``now``: one dict per GPU, index order.

    Deterministic for a given (host, uses, now); ``now`` adds small variation
    (it changes four times a second).
    """
    if now is None:
        now = time.time()
    model = get_model(host.get("gpu_model"))
    seed = str(host.get("uuid_seed") or "sim")
    count = int(host.get("gpu_count", 1))
    offset = int(host.get("pid_offset", 0) or 0)
    tick = int(now * 4)
    states = []
    for index in range(count):

        def jitter(key: str, _index: int = index) -> float:
            return noise(seed, _index, tick, key)

        procs = []
        util_sum = 0
        mem_sum = 0
        for use in uses:
            if index in use.get("gpus", ()):
                procs.append(
                    (use["pid"] + offset, use.get("name") or "python3", int(use["mem_mib"]))
                )
                util_sum += int(use.get("util", 0))
                mem_sum += int(use["mem_mib"])
        procs.sort()
        util = min(100, util_sum)
        if util >= 99:
            util = 100 if jitter("u") > 0.6 else 99
        load = util / 100.0
        busy = util > 0 or bool(procs)

        mem_used = model.mem_idle_used_mib
        if procs:
            mem_used += mem_sum + model.mem_ctx_base_mib + model.mem_ctx_per_proc_mib * len(procs)
        gap = model.mem_free_gap_busy_mib if procs else model.mem_free_gap_mib
        mem_used = min(mem_used, model.mem_total_mib - gap)
        mem_free = model.mem_total_mib - gap - mem_used

        idle_w = model.power_idle_w + (1.0 if procs and util == 0 else 0.0)
        power = idle_w + (model.power_full_w - model.power_idle_w) * load
        power += jitter("p") * (2.8 if util >= 90 else 0.4 + 2.0 * load)
        power = max(model.power_idle_w * 0.8, min(power, model.power_limit_w - 0.3))
        heat = _clamp((power - model.power_idle_w) / (model.power_full_w - model.power_idle_w))
        temp = int(
            round(
                model.temp_idle_c
                + (model.temp_full_c - model.temp_idle_c) * heat
                + 0.6 * jitter("t")
            )
        )
        if procs and util == 0:
            temp += 3  # still warm from the work that loaded it
        mem_temp = None
        if model.mem_temp_delta_c is not None:
            mem_temp = int(round(temp + 1 - 9 * heat))

        if util == 0:
            sm_mhz = model.sm_idle_mhz
        else:
            sm_mhz = model.sm_busy_mhz - (model.sm_busy_mhz - model.sm_capped_mhz) * _clamp(
                (load - 0.5) / 0.5
            )
            if util >= 90:
                sm_mhz += 15 * round(2 * jitter("sm"))
            sm_mhz = int(round(sm_mhz / 15.0)) * 15
        mem_clk = model.mem_busy_mhz if busy else model.mem_idle_mhz
        video = model.video_busy_mhz if util > 0 else model.video_idle_mhz

        fan = None
        if model.fan:
            span = model.temp_full_c - model.temp_idle_c
            fan = int(
                round(
                    model.fan_idle_pct
                    + (model.fan_max_pct - model.fan_idle_pct)
                    * _clamp((temp - model.temp_idle_c) / span)
                )
            )

        reasons = 0x1 if util == 0 else (0x4 if util >= 90 else 0x0)
        mem_util = int(round(util * model.mem_util_ratio + (jitter("mu") if util >= 90 else 0)))
        if model.bar1_total_mib >= model.mem_total_mib:
            bar1_used = mem_used + 1
        else:
            bar1_used = min(model.bar1_total_mib - 1, 1 + 2 * len(procs))
        mem_power = None
        if model.mem_power_idle_w is not None:
            mem_power = (
                model.mem_power_idle_w
                + (model.mem_power_full_w - model.mem_power_idle_w) * load
                + jitter("mp")
            )
        states.append(
            {
                "index": index,
                "model": model,
                "name": model.name,
                "uuid": gpu_uuid(seed, index),
                "serial": gpu_serial(seed, index),
                "bus_id": gpu_bus_id(model, index),
                "driver": str(host.get("driver_version", "580.159.04")),
                "cuda": str(host.get("cuda_version", "13.0")),
                "count": count,
                "now": now,
                "util": util,
                "mem_util": mem_util,
                "mem_total": model.mem_total_mib,
                "mem_used": mem_used,
                "mem_free": mem_free,
                "mem_reserved": model.mem_reserved_mib,
                "bar1_total": model.bar1_total_mib,
                "bar1_used": bar1_used,
                "temp": temp,
                "heat": heat,
                "mem_temp": mem_temp,
                "power": power,
                "power_avg": power - 0.6 * jitter("pa"),
                "power_inst": power + 12 * jitter("pi") * (1 if util else 0.2),
                "mem_power": mem_power,
                "power_limit": model.power_limit_w,
                "sm": sm_mhz,
                "mem_clk": mem_clk,
                "video": video,
                "fan": fan,
                "pstate": model.pstate_busy if busy else model.pstate_idle,
                "mig": "Disabled" if model.mig else None,
                **_ecc(host, index, model.ecc),
                "reasons": reasons,
                "sw_power_cap_us": (int(now * 1000) % 9_000_000) if util >= 90 else 0,
                "tx_kbs": int(800 + 7200 * load + 100 * jitter("tx")),
                "rx_kbs": int(500 + 14000 * load + 100 * jitter("rx")),
                "procs": procs,
            }
        )
    return states


def _ecc(host: dict, index: int, ecc_on: bool) -> dict:
    """The GPU's ECC and row-remap counters: zero on a healthy GPU, or what host.json's
    "ecc": {"INDEX": {"corrected", "uncorrected", "remapped_correctable",
    "remapped_uncorrectable", "remapped_pending", "remapped_failure"}} says (read live: a test
    raises them while the host runs). None where the GPU has no ECC (nvidia-smi: [N/A])."""
    if not ecc_on:
        return {key: None for key in _ECC_KEYS}
    given = (host.get("ecc") or {}).get(str(index)) or {}
    return {key: given.get(name, default) for key, (name, default) in _ECC_KEYS.items()}


_ECC_KEYS = {
    "ecc_unc": ("uncorrected", 0),
    "ecc_cor": ("corrected", 0),
    "rr_cor": ("remapped_correctable", 0),
    "rr_unc": ("remapped_uncorrectable", 0),
    "rr_pending": ("remapped_pending", False),
    "rr_failure": ("remapped_failure", False),
}
