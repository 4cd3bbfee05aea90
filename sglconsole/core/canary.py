"""The canary's prompts and how one answer is judged: OK, WRONG, DEGENERATE or TIMEOUT — pure.

A server can say 200 on /health while it answers nothing, loops, or says something else than it
did yesterday at temperature 0. The canary asks a few questions whose answer any instruction
model knows, greedy and short (a few tokens: cheap), and reads the answer: the expected word
must be in it and the degeneracy detector (core.degeneracy) must stay quiet. The answer's hash
says whether a greedy answer changed (state.canary compares it with the profile's first one).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from sglconsole.core import degeneracy

MAX_TOKENS = 16
"""Each answer is cut here: enough for "The answer is 4." or a loop to show, and no more."""


@dataclass(frozen=True)
class CanaryPrompt:
    name: str
    """Its short name in views and series (`arith`, `capital`, `weekday`)."""
    text: str
    expect: str
    """A word the answer must contain (case-insensitive)."""


PROMPTS: tuple[CanaryPrompt, ...] = (
    CanaryPrompt("arith", "What is 2+2? Answer with one number.", "4"),
    CanaryPrompt("capital", "What is the capital of France? Answer with one word.", "Paris"),
    CanaryPrompt(
        "weekday", "Continue the list with one word: Monday, Tuesday, Wednesday,", "Thursday"
    ),
)
VERDICTS = ("OK", "WRONG", "DEGENERATE", "TIMEOUT", "ERROR")
"""Worst last but one: ERROR is an HTTP error answer (not a verdict on the model)."""


@dataclass(frozen=True, kw_only=True)
class CanaryAnswer:
    """One prompt of one run."""

    prompt: str
    """The prompt's name."""
    expected: str
    verdict: str
    reason: str = ""
    answer: str | None = None
    """What the server said (None: nothing came)."""
    digest: str | None = None
    """sha256 of the answer, first 12 hex digits (None: no answer)."""
    ttft_s: float | None = None
    tok_s: float | None = None
    tokens: int | None = None
    """The tokens the server generated for it (its meta_info): the console's, not its clients'."""


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:12]


def judge(prompt: CanaryPrompt, answer: str) -> tuple[str, str]:
    """(verdict, reason) of a whole answer to PROMPT."""
    looping = degeneracy.check(answer)
    if looping.degenerate:
        return "DEGENERATE", looping.reason
    if prompt.expect.lower() not in answer.lower():
        return "WRONG", f"expected {prompt.expect!r}, got {answer.strip()[:60]!r}"
    return "OK", ""


def worst(verdicts: list[str]) -> str:
    """The run's verdict: its worst answer's (TIMEOUT over DEGENERATE over WRONG over OK)."""
    order = ("TIMEOUT", "ERROR", "DEGENERATE", "WRONG", "OK")
    return next((verdict for verdict in order if verdict in verdicts), "OK")
