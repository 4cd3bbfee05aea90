"""The requests a sweep sends: random token ids of a fixed length, reproducible from a seed (pure).

Token ids rather than text so the prompt length is exact on any tokenizer
(bench_serving's `random-ids` dataset does the same). Ids stay inside a range
every common vocabulary has and away from the special tokens, which sit at
the very bottom (Llama 2, Mistral) or the top (Qwen, Llama 3) of it.
"""

from __future__ import annotations

import random

from sglconsole.bench.model import SweepSettings

LOW_ID, HIGH_ID = 1000, 30000
PROMPT_KIND = f"random token ids in [{LOW_ID}, {HIGH_ID})"
WARMUP_TOKENS = 16


def token_ids(rng: random.Random, length: int) -> list[int]:
    return [rng.randrange(LOW_ID, HIGH_ID) for _ in range(length)]


def bodies(settings: SweepSettings, concurrency: int, count: int) -> list[dict]:
    """`count` /generate bodies; the seed and the level together fix every prompt."""
    rng = random.Random(f"{settings.seed}:{concurrency}")
    params = settings.sampling_params()
    return [
        {"input_ids": token_ids(rng, settings.input_len), "sampling_params": params, "stream": True}
        for _ in range(count)
    ]


def warmup_bodies(settings: SweepSettings, count: int) -> list[dict]:
    rng = random.Random(f"{settings.seed}:warmup")
    params = {
        **settings.sampling_params(),
        "max_new_tokens": min(WARMUP_TOKENS, settings.output_len),
    }
    return [
        {"input_ids": token_ids(rng, settings.input_len), "sampling_params": params, "stream": True}
        for _ in range(count)
    ]
