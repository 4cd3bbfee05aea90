"""Unicode sparklines and bars: small, fixed-width, deterministic."""

from __future__ import annotations

from collections.abc import Sequence

BLOCKS = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float], width: int = 16, top: float | None = None) -> str:
    """The last `width` values on a zero-based scale up to `top` (e.g. the baseline) or their max.

    Zero-based on purpose: scaled between min and max, 45 <-> 51 tok/s looked like an outage."""
    tail = [value for value in values if value is not None][-width:]
    if not tail:
        return ""
    high = max(max(tail), top or 0.0)
    if high <= 0:
        return BLOCKS[0] * len(tail)
    return "".join(BLOCKS[min(7, int(max(0.0, value) / high * 7.999))] for value in tail)


def bar(fraction: float | None, width: int = 10) -> tuple[str, str]:
    """A horizontal bar as (filled, empty) parts, so each can be styled."""
    if fraction is None:
        return "", "·" * width
    filled = round(max(0.0, min(1.0, fraction)) * width)
    return "█" * filled, "░" * (width - filled)
