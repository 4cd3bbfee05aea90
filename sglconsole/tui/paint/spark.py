"""Unicode sparklines and bars: small, fixed-width, deterministic."""

from __future__ import annotations

from collections.abc import Sequence

BLOCKS = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float], width: int = 16) -> str:
    """The last `width` values scaled between their min and max (flat when they are equal)."""
    tail = [v for v in values if v is not None][-width:]
    if not tail:
        return ""
    low, high = min(tail), max(tail)
    span = high - low
    if span <= 0:
        return BLOCKS[3] * len(tail)
    return "".join(BLOCKS[min(7, int((v - low) / span * 7.999))] for v in tail)


def bar(fraction: float | None, width: int = 10) -> tuple[str, str]:
    """A horizontal bar as (filled, empty) parts, so each can be styled."""
    if fraction is None:
        return "", "·" * width
    filled = round(max(0.0, min(1.0, fraction)) * width)
    return "█" * filled, "░" * (width - filled)
