"""The simulated GPUs' readings: what every nvidia-smi output of a host renders.

Deterministic for a host's settings, its registered GPU uses and the time.
"""

from __future__ import annotations

import time

from sglconsole.sim.gpu_models import get_model, gpu_bus_id, gpu_serial, gpu_uuid, noise


def _clamp(x: float, lo: float = 0.0, hi: float = 1.0) -> float:
    return lo if x < lo else hi if x > hi else x


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
