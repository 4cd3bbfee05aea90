"""What SGLang's ServerArgs.__post_init__ fills in where a launch left a flag unset.

Only for flags this version's parser has (keys present in the parsed args) and only where
the launch left them unset: a real 0.5.17 on an H200 listed these resolved in /server_info
(tests/fixtures/real-sglang-0.5.17-h200/idle/server_info.txt), not null.
"""

from __future__ import annotations

import random

from sglconsole.sim.server.graphs import PREFILL_GRAPH_TOKENS, decode_graph_sizes

# flag -> (the value a launch leaves, what __post_init__ makes of it on one CUDA node)
_FIXED = {
    "page_size": (None, 1),
    "device": (None, "cuda"),
    "sampling_backend": (None, "flashinfer"),  # flashinfer is importable on a CUDA host
    "load_balance_method": ("auto", "round_robin"),  # "follow_bootstrap_room" only for PD
    "speculative_moe_runner_backend": (None, "auto"),
    "expert_distribution_recorder_buffer_size": (None, 1000),
    "uses_mamba_radix_cache": (None, False),
    "mm_process_config": (None, {}),
    "mm_feature_transport": (None, "cuda_ipc"),  # single-node CUDA
    "encoder_transfer_backend": ("auto", "zmq_to_scheduler"),
    "custom_weight_loader": (None, []),
}


def post_init(args: dict, max_running_requests: int) -> dict:
    """`args` (the parsed namespace) with the values ServerArgs resolves."""
    out = dict(args)
    for flag, (unset, value) in _FIXED.items():
        if flag in out and out[flag] == unset:
            out[flag] = value
    out.setdefault("uses_mamba_radix_cache", False)  # a derived field, no flag: only listed
    # in /server_info where the release's ServerArgs has it
    if "random_seed" in out and out["random_seed"] is None:
        out["random_seed"] = random.randint(0, 1 << 30)
    if out.get("speculative_algorithm") == "NGRAM":
        # the ngram worker drafts a BFS tree: top-k = its max breadth; releases with the
        # per-phase graph config (0.5.17) also say 0 draft steps (0.5.12 left it None)
        if "cuda_graph_config" in out and out.get("speculative_num_steps") is None:
            out["speculative_num_steps"] = 0
        if out.get("speculative_eagle_topk") is None:
            out["speculative_eagle_topk"] = out.get("speculative_ngram_max_bfs_breadth") or 10
    if "cuda_graph_config" in out and out["cuda_graph_config"] is None:
        out["cuda_graph_config"] = _cuda_graph_config(out, max_running_requests)
    if "attn_dp_size" in out:
        _dp_attention(out)
    return out


def _dp_attention(out: dict) -> None:
    """0.5.23's `_handle_deprecated_dp_attention`: `--dp-size N --enable-dp-attention` resolves
    to attn_dp_size N, dp_size 1 (unless --attn-dp-size was given); resolved_dict then reports
    enable_dp_attention as attn_dp_size > 1 "for clients that still read it"."""
    if out.get("enable_dp_attention") and (out.get("attn_dp_size") or 1) == 1:
        out["attn_dp_size"], out["dp_size"] = out.get("dp_size") or 1, 1
    out["enable_dp_attention"] = (out.get("attn_dp_size") or 1) > 1


def _cuda_graph_config(args: dict, max_running_requests: int) -> dict:
    """0.5.17's per-phase graph config: full decode graphs up to the running limit, breakable
    prefill graphs up to the chunk size. As `cuda_graph_hook` orders them: --disable-cuda-graph
    lowest, then --disable-{decode,prefill}-cuda-graph, then --cuda-graph-backend-{phase}."""
    off = bool(args.get("disable_cuda_graph"))
    decode_sizes = decode_graph_sizes(args, max_running_requests)
    chunk = int(args.get("chunked_prefill_size") or 8192)

    def phase(name: str, backend: str, max_bs: int, sizes: list[int]) -> dict:
        if off or args.get(f"disable_{name}_cuda_graph"):
            backend = "disabled"
        return {
            "backend": args.get(f"cuda_graph_backend_{name}") or backend,
            "max_bs": max_bs,
            "bs": sizes,
            "tc_compiler": args.get("cuda_graph_tc_compiler") or "eager",
            "full_prefill_max_req": None,
            "full_prefill_prefix_chunk_tokens": None,
        }

    return {
        "decode": phase("decode", "full", decode_sizes[-1], decode_sizes),
        "prefill": phase(
            "prefill",
            "breakable",
            chunk,
            [size for size in PREFILL_GRAPH_TOKENS if size <= chunk],
        ),
    }
