"""How fast a simulated server runs, derived from its flags, model and GPU.

The point is that a drifted config *really* runs slower: speculative steps and
draft tokens set the accept length, batch size slows each step, disabled CUDA
graphs cost time, and so does the spec V1 worker (no overlap of draft and
verify) where the release still has one: SGLANG_ENABLE_SPEC_V2 decides it only
where the release's env table declares it (0.5.9/0.5.10 default off, 0.5.11-0.5.13
default on, so only `=0` selects V1; later releases do not read it). Numbers are modelled
on the story in DESIGN.md (27B, TP=2, 2x A6000: ~70 tok/s proven with
3 steps / 4 draft tokens, ~35 tok/s with 1 step / 2 draft tokens).
"""

from __future__ import annotations

from dataclasses import dataclass

from sglconsole.sim import envtable

# seconds of decode step per GB of weights on one GPU (memory bandwidth bound)
SECONDS_PER_GB = {"H200": 0.0009, "A6000": 0.0031}
STEP_OVERHEAD_S = 0.004
# each extra draft position is accepted with a falling probability (chain drafts, topk 1)
ACCEPT_GAIN = (0.75, 0.75, 0.72, 0.45, 0.30, 0.20, 0.12, 0.08)
SPEC_ALGORITHMS = {"NEXTN", "EAGLE", "EAGLE3", "MTP", "STANDALONE", "NGRAM", "LOOKAHEAD"}


@dataclass(frozen=True)
class PerfModel:
    step_base_s: float
    spec_steps: int
    draft_tokens: int
    spec_enabled: bool
    spec_v2: bool
    cuda_graph: bool
    cuda_graph_max_bs: int
    prefill_tokens_per_s: float

    @property
    def accept_len(self) -> float:
        """Mean tokens produced per request per step."""
        if not self.spec_enabled:
            return 1.0
        depth = max(0, min(self.spec_steps, self.draft_tokens - 1))
        return 1.0 + sum(ACCEPT_GAIN[: min(depth, len(ACCEPT_GAIN))])

    def step_time(self, batch: int) -> float:
        batch = max(1, batch)
        per_step = self.step_base_s * (1 + 0.05 * (batch - 1))
        if self.spec_enabled:
            per_step *= 1 + 0.01 * self.spec_steps + 0.004 * (batch - 1) * self.draft_tokens
            if not self.spec_v2:
                per_step *= 1.08  # no overlap of draft and verify
        if not self.cuda_graph or batch > self.cuda_graph_max_bs:
            per_step *= 1.6
        return per_step

    def uses_cuda_graph(self, batch: int) -> bool:
        return self.cuda_graph and batch <= self.cuda_graph_max_bs


def tp_size(args: dict) -> int:
    """--tp-size: dest tp_size in 0.5.23, tensor_parallel_size in 0.5.9/0.5.11."""
    return int(args.get("tp_size") or args.get("tensor_parallel_size") or 1)


def spec_v2(version: str | None, env: dict) -> bool:
    """Whether speculation runs the V2 (overlapped) worker: as the release reads its switch;
    one that does not declare SGLANG_ENABLE_SPEC_V2 has only V2 (unknown version: as set)."""
    if version is None:
        return str(env.get("SGLANG_ENABLE_SPEC_V2", "")).lower() in envtable.TRUE
    switch = envtable.enabled(version, env, "SGLANG_ENABLE_SPEC_V2")
    return True if switch is None else switch


def build(
    args: dict, env: dict, gpu_model: str, weights_gb: float, version: str | None = None
) -> PerfModel:
    tensor_parallel = tp_size(args)
    seconds_per_gb = SECONDS_PER_GB.get(gpu_model, 0.002)
    algorithm = str(args.get("speculative_algorithm") or "").upper()
    spec = algorithm in SPEC_ALGORITHMS
    steps = int(args.get("speculative_num_steps") or (3 if spec else 0))
    draft = int(args.get("speculative_num_draft_tokens") or (steps + 1 if spec else 0))
    return PerfModel(
        step_base_s=STEP_OVERHEAD_S + seconds_per_gb * weights_gb / tensor_parallel,
        spec_steps=steps,
        draft_tokens=draft,
        spec_enabled=spec,
        spec_v2=spec_v2(version, env),
        cuda_graph=not args.get("disable_cuda_graph"),
        cuda_graph_max_bs=int(args.get("cuda_graph_max_bs") or 160),
        prefill_tokens_per_s=20000.0 * tensor_parallel / max(weights_gb / 10, 0.5),
    )
