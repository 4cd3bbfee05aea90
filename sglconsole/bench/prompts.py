"""The requests a sweep sends: random token ids of a fixed length, reproducible from a seed (pure).

Token ids rather than text so the prompt length is exact on any tokenizer
(bench_serving's `random-ids` dataset does the same). Ids stay inside the
model's own vocabulary (one past it crashed a real SGLang scheduler) and away
from the special tokens, which sit at the very bottom (Llama 2, Mistral) or the
top (Qwen, Llama 3) of it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from sglconsole.bench.model import SweepSettings

LOW_ID, HIGH_ID = 1000, 30000
PROMPT_KIND = f"random token ids in [{LOW_ID}, {HIGH_ID})"
"""What a bench_serving run's provenance says (its own prompts); the console's say their range."""
WARMUP_TOKENS = 16
SMALLEST_VOCAB = 16  # below this a "vocabulary" is a misread config, not a model


@dataclass(frozen=True)
class IdRange:
    """Token ids a prompt may hold: [low, high)."""

    low: int
    high: int

    @classmethod
    def for_vocab(cls, vocab_size: int) -> IdRange:
        """Inside [0, vocab_size), away from the bottom (special tokens) as far as it allows."""
        if vocab_size < SMALLEST_VOCAB:
            raise ValueError(f"a vocabulary of {vocab_size} tokens is not a model's")
        return cls(min(LOW_ID, vocab_size // 4), min(HIGH_ID, vocab_size))

    @property
    def kind(self) -> str:
        return f"random token ids in [{self.low}, {self.high})"


def token_ids(rng: random.Random, length: int, ids: IdRange) -> list[int]:
    return [rng.randrange(ids.low, ids.high) for _ in range(length)]


def bodies(settings: SweepSettings, concurrency: int, count: int, ids: IdRange) -> list[dict]:
    """`count` /generate bodies; the seed and the level together fix every prompt."""
    rng = random.Random(f"{settings.seed}:{concurrency}")
    params = settings.sampling_params()
    return [
        {
            "input_ids": token_ids(rng, settings.input_len, ids),
            "sampling_params": params,
            "stream": True,
        }
        for _ in range(count)
    ]


def warmup_bodies(settings: SweepSettings, count: int, ids: IdRange) -> list[dict]:
    rng = random.Random(f"{settings.seed}:warmup")
    params = {
        **settings.sampling_params(),
        "max_new_tokens": min(WARMUP_TOKENS, settings.output_len),
    }
    return [
        {
            "input_ids": token_ids(rng, settings.input_len, ids),
            "sampling_params": params,
            "stream": True,
        }
        for _ in range(count)
    ]
