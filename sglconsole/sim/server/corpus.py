"""Text the simulated model generates: coherent-looking, or degenerate on purpose."""

from __future__ import annotations

import itertools
import random
import re

SUBJECTS = [
    "The scheduler",
    "A speculative draft",
    "The radix cache",
    "Tensor parallelism",
    "The KV cache",
    "Chunked prefill",
    "The tokenizer",
    "A CUDA graph",
    "The router",
    "Each decode step",
    "The detokenizer",
    "Prefix caching",
    "The memory pool",
    "Continuous batching",
    "The attention kernel",
]
VERBS = [
    "keeps",
    "reduces",
    "trades",
    "hides",
    "spreads",
    "limits",
    "doubles",
    "shapes",
    "balances",
    "bounds",
]
OBJECTS = [
    "latency for the first token",
    "memory traffic per request",
    "the cost of long prompts",
    "throughput under load",
    "work across {n} GPUs",
    "the number of running requests",
    "time spent waiting in the queue",
    "about {n} percent of the step time",
    "pressure on the allocator",
    "the gap between prefill and decode",
    "tokens accepted per verification",
    "the size of each batch",
]
CLAUSES = [
    "when the batch grows past {n} requests",
    "as long as the draft model agrees",
    "on a busy afternoon",
    "if the context stays under {k} thousand tokens",
    "while the GPU is memory bound",
    "unless the operator changes the launch flags",
    "for workloads with shared system prompts",
    "after the warmup finishes",
    "in most production traces",
    "once the cache is warm",
]

NAMES = [
    "total",
    "count",
    "window",
    "prefix",
    "budget",
    "offset",
    "score",
    "limit",
    "chunk",
    "rate",
]


def sentence(rng: random.Random) -> str:
    fill = {"n": rng.randint(2, 96), "k": rng.choice([8, 16, 32, 64, 128])}
    text = (
        f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} {rng.choice(CLAUSES)}."
    )
    return text.format(**fill)


def code_block(rng: random.Random) -> str:
    name, arg = rng.choice(NAMES), rng.choice(NAMES)
    number = rng.randint(2, 512)
    return (
        f"def {name}_{rng.randint(1, 999)}({arg}):\n"
        f"    result = {arg} * {number} + {rng.randint(0, 99)}\n"
        f"    if result > {number * rng.randint(2, 9)}:\n"
        f"        return result // {rng.randint(2, 16)}\n"
        f"    return result\n\n"
    )


_TOKEN = re.compile(r"\s*\S+|\n")


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text)


def count_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def join(tokens: list[str]) -> str:
    return "".join(tokens)


class WordStream:
    """Tokens to emit, possibly ending with a stop (EOS)."""

    def __init__(self, tokens, ends: bool):
        self._tokens = iter(tokens)
        self._ends = ends

    def take(self, count: int) -> tuple[list[str], bool]:
        out = list(itertools.islice(self._tokens, count))
        return out, self._ends and len(out) < count


KNOWN_ANSWERS = (
    ("2+2", ["4"]),
    ("capitalofFrance", [" Paris"]),
    ("Monday,Tuesday,Wednesday,", [" Thursday"]),
)
"""Prompts the simulated model answers like a real one does at temperature 0, then stops (the
console's canary asks these)."""


def known_answer(prompt: str) -> list[str] | None:
    compact = prompt.replace(" ", "")
    return next((list(tokens) for key, tokens in KNOWN_ANSWERS if key in compact), None)


def answer_stream(prompt: str, rng: random.Random) -> WordStream:
    known = known_answer(prompt)
    if known is not None:
        return WordStream(known, ends=True)
    if any(word in prompt.lower() for word in ("code", "python", "function", "program")):
        blocks = (code_block(rng) for _ in itertools.count())
        return WordStream((tok for block in blocks for tok in tokenize(block)), ends=False)
    sentences = (sentence(rng) for _ in itertools.count())
    return WordStream((tok for line in sentences for tok in tokenize(" " + line)), ends=False)


def degenerate_stream(prompt: str) -> WordStream:
    """What a broken build produces: a loop that never ends."""
    compact = prompt.replace(" ", "")
    if "2+2" in compact:
        return WordStream(itertools.cycle(["2", " +", " 2", " =", " 2."]), ends=False)
    return WordStream(itertools.cycle([" prime"]), ends=False)
