"""SGLang's load endpoints on the simulated server, from the scheduler's last published snapshot:
/get_load (answers, frozen, while the scheduler is wedged) and /v1/loads (waits for the scheduler:
routes.py), in the shape the version's table gives."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sglconsole.sim import versiontable

if TYPE_CHECKING:
    from sglconsole.sim.server.main import SimServer


def get_load_body(server: SimServer) -> list[dict]:
    engine = server.engine
    stats = engine.stats if engine else None
    used = engine._kv_tokens() if engine else 0
    total = engine.max_total_tokens if engine else 0
    table = versiontable.load(server.version)
    shape = table.get("v1_loads") or {}
    # 0.5.17 (load_snapshot.py; its /v1/loads has no "aggregate"): a shim over the snapshot
    if shape and "aggregate" not in shape["keys"]:
        waiting = stats.waiting_tokens if stats else 0
        used = stats.used_tokens if stats else 0
        known = {
            "dp_rank": 0,
            "num_reqs": (stats.running + stats.queued) if stats else 0,
            "num_waiting_reqs": stats.queued if stats else 0,
            "num_tokens": used + waiting,
            "num_pending_tokens": waiting,
            "ts_tic": time.perf_counter(),
        }
    else:
        known = {
            "dp_rank": None,  # SGLang's scheduler has no dp_rank without data parallelism
            "num_reqs": (stats.running + stats.queued) if stats else 0,
            "num_waiting_reqs": stats.queued if stats else 0,
            "num_tokens": total,
            "num_pending_tokens": total - used,
            "ts_tic": time.perf_counter(),
        }
    keys = versiontable.load(server.version).get("get_load_keys") or list(known)
    return [{key: known.get(key) for key in keys}]


def v1_loads_body(server: SimServer, shape: dict, include: set[str] | None) -> dict:
    engine = server.engine
    stats = engine.stats if engine else None
    used = stats.used_tokens if stats else 0  # the scheduler's last published snapshot
    waiting = stats.waiting_tokens if stats else 0
    capacity = engine.max_total_tokens if engine else 0
    core = {
        "timestamp": time.time(),
        "dp_rank": 0,
        "num_running_reqs": stats.running if stats else 0,
        "num_waiting_reqs": stats.queued if stats else 0,
        "num_waiting_uncached_tokens": waiting,
        "num_used_tokens": used,
        "num_total_tokens": used + waiting,
        "num_active_tokens": used + waiting,
        "max_total_num_tokens": capacity,
        "max_running_requests": int(server.resolved.get("max_running_requests") or 0),
        "token_usage": round(stats.token_usage, 4) if stats else 0.0,
        "gen_throughput": stats.gen_throughput if stats else 0.0,
        "cache_hit_rate": 0.0,
        "utilization": min(1.0, (stats.running if stats else 0) / max(1, engine.max_running))
        if engine
        else 0.0,
        "total_prefill_uncached_tokens": stats.prompt_tokens_total if stats else 0,
        "total_prefill_busy_us": 0,
        "decode_moments": None,
    }
    sections = {
        "memory": {
            "weight_gb": 0.0,
            "kv_cache_gb": 0.0,
            "graph_gb": 0.0,
            "token_capacity": capacity,
        },
        "disaggregation": {"mode": "null"},
        "queues": {"waiting": stats.queued if stats else 0},
    }
    if engine and engine.perf.spec_enabled and stats.spec_verify_total > 0:
        accept = stats.generation_tokens_total / stats.spec_verify_total
        sections["speculative"] = {
            "accept_length": accept,
            "accept_rate": engine._accept_rate(accept),
        }
    load = {key: core.get(key) for key in shape["core_keys"]}
    if include is None or "all" in include or include != {"core"}:
        aliases = {"speculative": "spec", "disaggregation": "disagg"}
        for name, fields in shape["sections"].items():
            if name not in sections:
                continue
            if (
                include is not None
                and "all" not in include
                and aliases.get(name, name) not in include
            ):
                continue
            load[name] = {field: sections[name].get(field, 0) for field in fields}
    top = {
        "timestamp": datetime.now(UTC).isoformat(),
        "version": server.version,
        "accelerator": f"NVIDIA {server.gpu.key}",
        "num_accelerators": server.tp_size,
        "loads": [load],
    }
    if "aggregate" in shape["keys"]:  # 0.5.9-0.5.1x: the answer of GetLoadsReqOutput's days
        load.pop("timestamp", None)  # its dict factory left the timestamp out of each entry
        running, waiting = core["num_running_reqs"], core["num_waiting_reqs"]
        load["num_total_reqs"] = running + waiting
        top["dp_rank_count"] = 1
        top["aggregate"] = {
            "total_running_reqs": running,
            "total_waiting_reqs": waiting,
            "total_reqs": running + waiting,
            "avg_token_usage": core["token_usage"],
            "avg_throughput": round(core["gen_throughput"], 2),
            "avg_utilization": round(core["utilization"], 4),
        }
    return {key: top.get(key) for key in shape["keys"]}
