"""The simulated standalone weight-cache daemon: `python -m sglang.srt.weight_cache.daemon ...`.

SGLang 0.5.17+ (srt/weight_cache/daemon.py): it loads a model's weights onto the GPU of each of
its TP ranks and keeps them there, across server restarts, until it is stopped; a server started
with `--weight-cache-mode client` loads from it. Real SGLang runs one process per rank (spawned
children of the launcher); here one process holds the weights on every GPU it was given.
Stdlib only besides the simulator's own modules (it runs on the simulated host).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time

from sglconsole.sim import gpustate, settings
from sglconsole.sim.server import logfmt


def main(argv: list[str] | None = None, *, version: str, root: str) -> int:
    parser = argparse.ArgumentParser(prog="daemon.py")
    parser.add_argument("--model-path", required=True)
    parser.add_argument("--tp-size", "--tp", type=int, default=1)
    parser.add_argument("--gpu-id", type=int)
    args, _server_argv = parser.parse_known_args(argv)  # the rest are ServerArgs, as in SGLang
    model = settings.model_info(args.model_path)
    if model is None:
        print(f"OSError: {args.model_path} is not a model folder", file=sys.stderr, flush=True)
        return 1
    visible = [
        int(part)
        for part in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")
        if part.strip().isdigit()
    ]
    tp_size = max(1, args.tp_size)
    gpus = [args.gpu_id] if args.gpu_id is not None else (visible or list(range(tp_size)))[:tp_size]
    per_gpu_mib = int(float(model.get("sim_weights_gb", 16.0)) / tp_size * 1024) + 512
    say = lambda text: print(logfmt.line(text, ""), flush=True)  # noqa: E731
    say(f"Launching {len(gpus)} weight cache daemon(s) on node 0 for model={args.model_path}")
    signal.signal(signal.SIGTERM, lambda *_: _stop(root))
    gpustate.register_gpu_use(root, os.getpid(), gpus, per_gpu_mib, 0, "python3")
    for rank in range(len(gpus)):
        say(f"Weight cache daemon for pp_rank=0 tp_rank={rank} is ready")
    while True:
        time.sleep(3600)


def _stop(root: str) -> None:
    gpustate.unregister_gpu_use(root, os.getpid())
    sys.exit(0)
