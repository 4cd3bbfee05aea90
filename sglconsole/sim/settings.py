"""Per-host simulator settings: how the simulated SGLang servers on a host behave.

They live in ROOT/sim/host.json next to the GPU settings (see gpustate), under
"sglang", with optional per-port overrides — failure modes are properties of
the simulated *host*, never flags a real server lacks:

    "sglang": {"version": "0.5.23", "startup_s": 3.0, "degenerate": false,
               "oom_at_start": false, "die_after_s": null, "linger_children": false,
               "zombie_child": false, "reserved_gib": 0.0,
               "load": {"concurrency": 0, "max_tokens": 256},
               "ports": {"30001": {"degenerate": true}}}
"""

from __future__ import annotations

import json
import os

SGLANG_DEFAULTS: dict = {
    "version": "0.5.23",
    "startup_s": 3.0,
    "degenerate": False,
    "oom_at_start": False,
    "die_after_s": None,
    "linger_children": False,
    "zombie_child": False,
    "jit_build": False,  # the first scheduler runs a JIT build (ninja + nvcc) in its own session
    "reserved_gib": 0.0,
    "tick_s": 0.05,  # how often the simulated scheduler advances (coarser = cheaper)
    "child_poll_s": 0.5,  # how often the simulated children refresh what they report to nvidia-smi
    "http": None,  # None | "hang" | "500" | "garbage" | "wrong_json": how every endpoint misbehaves
    "load": {"concurrency": 0, "max_tokens": 256},
}


def host_settings(root: str) -> dict:
    try:
        with open(os.path.join(root, "sim", "host.json"), encoding="utf-8") as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def server_settings(root: str, port: int) -> dict:
    """The sglang settings for the server on `port` (host-wide, then the port's overrides)."""
    host = host_settings(root).get("sglang") or {}
    merged = {**SGLANG_DEFAULTS, **{k: v for k, v in host.items() if k != "ports"}}
    merged.update((host.get("ports") or {}).get(str(port), {}))
    merged["load"] = {**SGLANG_DEFAULTS["load"], **(merged.get("load") or {})}
    return merged


def model_info(model_path: str) -> dict | None:
    """config.json of a simulated model folder, or None when the path does not exist."""
    try:
        with open(os.path.join(model_path, "config.json"), encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None
