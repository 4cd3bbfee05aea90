"""Does generated text loop? ("prime prime prime", "2 + 2 = 2.2 + 2 = 2.2 + 2") — pure.

A health check that generates one token cannot see this; a probe that reads
its answer can. Three signals, any of which is enough:
- the same word four or more times in a row;
- the tail of the text is periodic (a short cycle repeated 2.5+ times and
  covering most of the answer);
- a long answer that compresses far better than prose ever does.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

_WORD = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True)
class Verdict:
    degenerate: bool
    reason: str = ""


def check(text: str) -> Verdict:
    text = text.strip()
    if len(text) < 8:
        return Verdict(False)
    words = _WORD.findall(text.lower())
    run = _longest_run(words)
    if run[1] >= 4 and run[0].isalnum():
        return Verdict(True, f"'{run[0]}' repeated {run[1]} times in a row")
    cycle = _periodic_tail(text)
    if cycle is not None:
        unit, repeats = cycle
        return Verdict(True, f"{unit!r} repeats {repeats:.1f} times")
    if len(text) >= 400:
        ratio = len(zlib.compress(text.encode())) / len(text.encode())
        if ratio < 0.12:
            return Verdict(True, f"the answer compresses to {ratio:.0%} of its size (loops)")
    return Verdict(False)


def _longest_run(words: list[str]) -> tuple[str, int]:
    best, best_len, current, length = "", 0, None, 0
    for word in words:
        length = length + 1 if word == current else 1
        current = word
        if length > best_len:
            best, best_len = word, length
    return best, best_len


def _periodic_tail(text: str, max_period: int = 80) -> tuple[str, float] | None:
    compact = re.sub(r"\s+", " ", text)
    length = len(compact)
    for period in range(2, min(max_period, length // 2) + 1):
        span = _periodic_span(compact, period)
        repeats = span / period
        if repeats >= 2.5 and span >= 0.6 * length and span >= 12:
            return compact[length - period :], repeats
    return None


def _periodic_span(text: str, period: int) -> int:
    """How many characters at the end of `text` follow a cycle of length `period`."""
    length = len(text)
    span = period
    while span < length and text[length - span - 1] == text[length - span - 1 + period]:
        span += 1
    return span
