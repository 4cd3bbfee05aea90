"""The CUDA graph capture lines a simulated server writes at startup, in its version's wording.

0.5.9-0.5.12: one decode (or verify) graph, then piecewise prefill graphs where on; 0.5.17+: a
breakable target prefill graph, then the decode/verify graph, and the startup timings line.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import TYPE_CHECKING

from sglconsole.sim.server import perf

if TYPE_CHECKING:
    from sglconsole.sim.server.main import SimServer

PREFILL_GRAPH_TOKENS = (
    *range(4, 33, 4),
    *range(48, 257, 16),
    *range(288, 513, 32),
    *range(576, 1025, 64),
    *range(1280, 4097, 256),
    *range(4608, 8193, 512),
)  # 0.5.17's breakable prefill graph sizes, as its startup line lists them


async def capture(server: SimServer, free: float, startup: float, weights_gb: float) -> None:
    if server.split_graphs:
        await _capture_split(server, free, startup)
        return
    args, tp_size = server.args, server.tp_size
    spec = perf.build(args, dict(os.environ), server.gpu.key, weights_gb).spec_enabled
    graph = {
        "capture_name": f"target {'verify' if spec else 'decode'}",
        "backend": "full",
        "num_tokens": [1, 2, 4, 8, 16, 24, 32],
    }
    for rank in range(tp_size):
        server.milestone("cuda_graph_begin", rank, avail_mem=free, **graph)
    await asyncio.sleep(startup * 0.2)
    for rank in range(tp_size):
        server.milestone(
            "cuda_graph_end",
            rank,
            elapsed=startup * 0.2 + 1.7,
            time_elapsed=startup * 0.2 + 1.7,
            mem_usage=0.10,
            avail_mem=free - 0.10,
            **graph,
        )
    if server.piecewise_graphs:
        for rank in range(tp_size):
            server.milestone("piecewise_graph_begin", rank, avail_mem=free - 0.10)
            server.milestone(
                "piecewise_graph_end",
                rank,
                time_elapsed=startup * 0.05 + 5.7,
                mem_usage=0.20,
                avail_mem=free - 0.30,
            )


def decode_graph_bs(server: SimServer) -> list[int]:
    return decode_graph_sizes(server.args, server.resolved.get("max_running_requests"))


def decode_graph_sizes(args: dict, max_running_requests: int | None) -> list[int]:
    limit = int(
        args.get("cuda_graph_max_bs_decode")
        or args.get("cuda_graph_max_bs")
        or max_running_requests
        or 256
    )
    sizes = [*range(1, 9), *range(10, 33, 2), *range(40, 257, 8)]
    return [size for size in sizes if size <= limit] or [1]


async def _capture_split(server: SimServer, free: float, startup: float) -> None:
    """The prefill graph, then the decode (or, speculative, verify) graph, like 0.5.17."""

    spec = perf.build(server.args, dict(os.environ), server.gpu.key, 0.0)
    prefill_s, decode_s = startup * 0.15 + 1.2, startup * 0.05 + 0.4
    decode_name = f"target {'verify' if spec.spec_enabled else 'decode'}"
    for rank in range(server.tp_size):
        server.milestone(
            "prefill_graph_begin",
            rank,
            capture_name="target prefill",
            backend="breakable",
            num_tokens=list(PREFILL_GRAPH_TOKENS),
            avail_mem=free,
        )
    await asyncio.sleep(startup * 0.15)
    for rank in range(server.tp_size):
        server.milestone(
            "cuda_graph_end",
            rank,
            capture_name="target prefill",
            elapsed=prefill_s,
            mem_usage=0.24,
            avail_mem=free - 0.24,
        )
        server.milestone(
            "decode_graph_begin",
            rank,
            capture_name=decode_name,
            backend="full",
            num_tokens_per_req=spec.draft_tokens if spec.spec_enabled else 1,
            bs=decode_graph_bs(server),
            avail_mem=free - 0.24,
        )
    await asyncio.sleep(startup * 0.05)
    for rank in range(server.tp_size):
        server.milestone(
            "cuda_graph_end",
            rank,
            capture_name=decode_name,
            elapsed=decode_s,
            mem_usage=0.08,
            avail_mem=free - 0.32,
        )
    server.startup_timings = {
        "cuda_graph": {
            "prefill": prefill_s,
            "decode": 0.0 if spec.spec_enabled else decode_s,
            "target_verify": decode_s if spec.spec_enabled else 0.0,
            "draft_prefill": 0.0,
            "draft_decode": 0.0,
            "draft_extend": 0.0,
        }
    }


def log_startup_timings(server: SimServer, startup: float) -> None:
    graphs = (server.startup_timings or {}).get("cuda_graph") or {
        name: 0.0
        for name in (
            "prefill",
            "decode",
            "target_verify",
            "draft_prefill",
            "draft_decode",
            "draft_extend",
        )
    }
    timings = {
        "load_weight": startup * 0.4 + 0.28,
        "kv_cache_allocation": startup * 0.2 + 1.9,
        "scheduler_e2e": time.time() - server.started,
        "cuda_graph": graphs,
        "tokenizer_e2e": time.time() - server.started + 0.5,
    }
    server.startup_timings = timings
    server.milestone(
        "engine_startup_timings",
        0,
        **{key: value for key, value in timings.items() if key != "cuda_graph"},
        cuda_graph_timings=", ".join(f"{name}={value:.2f}" for name, value in graphs.items()),
    )
