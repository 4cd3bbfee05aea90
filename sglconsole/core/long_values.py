"""Long values shortened where they are shown, saying they were cut (pure).

A CUDA image's NVIDIA_REQUIRE_CUDA is 2.9 KB of driver brands: shown whole it buried `diff`'s
table and every server of `status --json`. Text and JSON keep the start and the end and put a
note of the whole length in the middle; the full value stays on the host (/proc/PID/environ).
"""

from __future__ import annotations

LONG_VALUE_CHARS = 160
"""Longer than this is cut: room for any path, flag value or arch list, not for a brand table."""
_KEEP_HEAD = 2 / 3  # of what is kept: the start says what the value is, the end where it ends


def elide(value: object, limit: int = LONG_VALUE_CHARS) -> object:
    """`value` as shown: a string over `limit` characters keeps its start and end, with
    `...[N chars, cut]...` in between; anything else is returned as it is."""
    if not isinstance(value, str) or len(value) <= limit:
        return value
    note = f" ...[{len(value):,} chars, cut]... "
    keep = max(limit - len(note), 2)
    head = round(keep * _KEEP_HEAD)
    return value[:head] + note + value[len(value) - (keep - head) :]


def elide_env(env: dict[str, str], limit: int = LONG_VALUE_CHARS) -> dict[str, str]:
    return {name: elide(value, limit) for name, value in env.items()}


def cut_lengths(env: dict[str, str], limit: int = LONG_VALUE_CHARS) -> dict[str, int]:
    """For JSON beside the shortened mapping: the whole length of each value that was cut."""
    return {name: len(value) for name, value in env.items() if len(value) > limit}
