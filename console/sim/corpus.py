"""Text the simulated model generates: coherent-looking, or degenerate on purpose."""

from __future__ import annotations

import itertools
import random
import re

SENTENCES = [
    "The scheduler batches requests so the GPU stays busy while each user still sees steady progress.",
    "Speculative decoding drafts several tokens ahead and verifies them in one forward pass.",
    "When the draft model agrees with the target model, more than one token is accepted per step.",
    "A radix tree caches shared prompt prefixes so repeated system prompts are not recomputed.",
    "Tensor parallelism splits each layer across GPUs, trading communication for memory.",
    "The KV cache grows with context length, which is why memory fraction matters at launch.",
    "Throughput per request falls as the batch grows, while the total tokens per second rise.",
    "Chunked prefill interleaves long prompts with decoding so latency stays predictable.",
    "Operators compare the running flags with the proven profile before blaming the model.",
    "A health check that generates one token proves progress, not that the answer makes sense.",
]

CODE = [
    "def fibonacci(n):",
    "    a, b = 0, 1",
    "    for _ in range(n):",
    "        a, b = b, a + b",
    "    return a",
    "",
    "def is_prime(n):",
    "    if n < 2:",
    "        return False",
    "    return all(n % k for k in range(2, int(n ** 0.5) + 1))",
]

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

    def take(self, n: int) -> tuple[list[str], bool]:
        out = list(itertools.islice(self._tokens, n))
        return out, self._ends and len(out) < n


def answer_stream(prompt: str, rng: random.Random) -> WordStream:
    compact = prompt.replace(" ", "")
    if "2+2" in compact:
        return WordStream(["4"], ends=True)
    if any(word in prompt.lower() for word in ("code", "python", "function", "program")):
        lines = itertools.cycle(CODE)
        return WordStream((tok for line in lines for tok in tokenize(line + "\n")), ends=False)
    order = list(SENTENCES)
    rng.shuffle(order)
    sentences = itertools.cycle(order)
    return WordStream((tok for s in sentences for tok in tokenize(" " + s)), ends=False)


def degenerate_stream(prompt: str) -> WordStream:
    """What a broken build produces: a loop that never ends."""
    compact = prompt.replace(" ", "")
    if "2+2" in compact:
        return WordStream(itertools.cycle(["2", " +", " 2", " =", " 2."]), ends=False)
    return WordStream(itertools.cycle([" prime"]), ends=False)
