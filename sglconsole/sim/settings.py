"""Per-host simulator settings: how the simulated SGLang servers on a host behave.

They live in ROOT/sim/host.json next to the GPU settings (see gpustate), under
"sglang", with optional per-port overrides — failure modes are properties of
the simulated *host*, never flags a real server lacks:

    "sglang": {"version": "0.5.23", "startup_s": 3.0, "degenerate": false,  # or ["0.5.9"]
               "oom_at_start": false, "die_after_s": null, "linger_children": false,
               "zombie_child": false, "reserved_gib": 0.0,
               "load": {"concurrency": 0, "max_tokens": 256, "sampled": false},
               "ports": {"30001": {"degenerate": true}}}

The background load's requests are greedy unless "sampled" (top_p 0.9: the first of them on a
fresh host then starts the JIT stall below when jit_stall_s is set).

How a real scheduler wedges (stall.py; what real SGLang 0.5.17 did on an H200):

* "scheduler_stall": true|false — read live (within ~0.5 s): true wedges the scheduler until set
  back to false. Requests in flight produce nothing, no Decode/Prefill line is written;
  /model_info, /get_model_info, /v1/models, /get_load, /v1/loads and /metrics answer at once
  with frozen values; /health, /health_generate, /server_info, /get_server_info answer only when
  the stall ends (a health check silent for health_timeout_s logs SGLang's "Health check failed.
  ..." line and answers 503).
* "jit_stall_s": seconds or null (default) — the first request that needs flashinfer's sampling
  kernels (temperature > 0 with top_p < 1, top_k > 1 or min_p > 0, sampling backend flashinfer,
  0.5.17's default) wedges the scheduler this long on a host without a JIT cache marker
  (HOME/.cache/flashinfer/..., HOME being the host's root); afterwards the marker exists, so it
  happens once per host (~85-89 s on the real H200).
* "health_timeout_s": seconds or null — SGLang's HEALTH_CHECK_TIMEOUT for /health and
  /health_generate (null: env SGLANG_HEALTH_CHECK_TIMEOUT, else 20 s, like SGLang).
* "leak_mib_s": MiB per second (default 0), read live — each scheduler of the server really
  allocates this much host memory every second (its RSS grows, as a leaking SGLang's); the host's
  MemAvailable falls by its own "memory" setting (sim/host/signs.py).
* "log_history_lines": N (default 0) — right after the ready line, write N decode and uvicorn
  access lines (about 160 bytes each) as if the server had served a while, so a lifetime's
  startup lines sit far back in the log (N=2000 puts them > 256 KiB back, in well under 1 s).
  `--decode-log-interval` is honoured too (1 under load writes a decode line per step).

How a real server closes connections (uvicorn, http.py): a connection idle for the release's
SGLANG_TIMEOUT_KEEP_ALIVE (5 s by default) is closed, always; and
* "keepalive_race": true — the race a client can lose against that close, every time: a request on
  a kept-alive connection is read and the connection closed without an answer (what uvicorn does
  when its keep-alive timer fires as the request arrives; against a real uvicorn, a client asking
  every 5 s lost about 1 request in 30-100 to it).

Healthy but wrong (misbehave.py, read live per generation request; /health stays 200):
"stop_serving_after": N (no answer after the Nth request), "hang_requests" (every request hangs,
0 running and 0 queued), "degrade_after": N (answers loop after the Nth), "nondeterministic"
(a greedy answer changes between requests), "nan_logits" (SGLang's NaN warning per request),
"kv_canary_violations": N (SGLang's `[canary] ... violations=N` line every 2 s).
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
    "http": None,  # None | "hang" | "500" | "garbage" | "wrong_json": how endpoints misbehave
    "http_paths": None,  # the endpoints `http` applies to (None: every one), e.g. ["/generate"]
    "load": {"concurrency": 0, "max_tokens": 256},
    "scheduler_stall": False,  # read live: the scheduler is wedged while true (stall.py)
    "jit_stall_s": None,  # first flashinfer-sampled request on a fresh host wedges it this long
    "health_timeout_s": None,  # SGLang's HEALTH_CHECK_TIMEOUT (None: its env var, else 20 s)
    "log_history_lines": 0,  # decode/access lines written right after ready (a long log)
    "stop_serving_after": None,  # generation requests after the Nth never answer (misbehave.py)
    "hang_requests": False,  # every generation request hangs, never queued nor running
    "degrade_after": None,  # answers loop after the Nth generation request
    "nondeterministic": False,  # a greedy answer changes from one request to the next
    "nan_logits": False,  # each request logs SGLang's NaN-in-logits warning
    "kv_canary_violations": None,  # SGLang's KV canary line, with violations=N, every 2 s
    "leak_mib_s": 0,  # read live: each scheduler's RSS grows this fast (child.py; signs.py)
}


def host_settings(root: str) -> dict:
    try:
        with open(os.path.join(root, "sim", "host.json"), encoding="utf-8") as file:
            data = json.load(file)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def server_settings(root: str, port: int) -> dict:
    """The sglang settings for the server on `port` (host-wide, then the port's overrides)."""
    host = host_settings(root).get("sglang") or {}
    merged = {**SGLANG_DEFAULTS, **{key: value for key, value in host.items() if key != "ports"}}
    merged.update((host.get("ports") or {}).get(str(port), {}))
    merged["load"] = {**SGLANG_DEFAULTS["load"], **(merged.get("load") or {})}
    return merged


def degenerate(settings: dict, version: str) -> bool:
    """Whether this server's output loops: `degenerate` true (whatever runs), or a list of the
    releases that loop on this host (the seed story: 0.5.9 loops on a model 0.5.11 serves well)."""
    value = settings.get("degenerate")
    if isinstance(value, list):
        return version in value
    return bool(value)


def model_info(model_path: str) -> dict | None:
    """config.json of a simulated model folder, or None when the path does not exist."""
    try:
        with open(os.path.join(model_path, "config.json"), encoding="utf-8") as file:
            return json.load(file)
    except (OSError, ValueError):
        return None
