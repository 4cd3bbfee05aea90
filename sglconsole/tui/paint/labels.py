"""Short labels shared by several views: GPU model names, tok/s, targets."""

from __future__ import annotations

import re

from sglconsole.core.text import clean, fmt_duration
from sglconsole.state.fleet import HostState, ServerState

_VENDOR = re.compile(r"^(NVIDIA\s+)?(GeForce\s+|RTX\s+|Tesla\s+)?", re.IGNORECASE)


def gpu_model(name: str | None) -> str:
    """'NVIDIA RTX A6000' -> 'A6000', 'NVIDIA H200' -> 'H200' (host text: cleaned)."""
    if not name:
        return "GPU"
    return _VENDOR.sub("", clean(name)).strip() or clean(name)


def gpu_summary(host: HostState) -> str:
    if not host.gpus:
        return ""
    return f"{len(host.gpus)}×{gpu_model(host.gpu_model)}"


def tok_s(value: float | None) -> str:
    """Four characters at most for the usual range: 34.5, 103, 1.2k."""
    if value is None:
        return "-"
    if value >= 1000:
        return f"{value / 1000:.1f}k"
    return f"{value:.0f}" if value >= 99.95 else f"{value:.1f}"


def uptime(seconds: float | None) -> str:
    """An uptime as the console shows it, never ahead of the truth: to the second in its first
    minute (a server that just started), then in whole minutes (12m) under an hour, then as
    everywhere (1h05m, 2d03h). To the second all along, a pane showing a server was drawn again
    every second, idle or not, for a digit nobody reads."""
    if seconds is None or seconds < 60 or seconds >= 3600:
        return fmt_duration(seconds)
    return f"{int(seconds // 60)}m"


def target(server: ServerState) -> str:
    return f"{clean(server.host)}:{server.port}"


def shorten(text: str, width: int) -> str:
    if width <= 0:
        return ""
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


_DIFFERS = re.compile(r"(config differs \([^)]*)\)$|(sglang version differs from the profile)$")


def why(server: ServerState) -> str:
    """The server's reason, and where it says the config differs, the key that shows how (only the
    TUI has a `d`: status, JSON and alerts carry the reason alone)."""
    return _DIFFERS.sub(_with_key, clean(server.view.reason))


def _with_key(found: re.Match) -> str:
    if found.group(1):
        return f"{found.group(1)}; d shows how)"
    return f"{found.group(2)} (d shows how)"
