"""Text from hosts made safe for the terminal, and the number formats every view shares.

Everything that came from a host (argv, log text, host names, errors) is stripped of escape
sequences and control characters, so a hostile log line cannot restyle or drive the terminal.
"""

from __future__ import annotations

import re

from rich.text import Text

_CONTROL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI sequences (colours, cursor moves)
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC sequences (titles, hyperlinks)
    r"|\x1b[@-Z\\-_]"  # other two-character escapes
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"  # C0 and C1 control characters but tab and newline
)


def clean(value: object) -> str:
    """Text from a host, safe to put on the terminal: escape sequences and control characters
    removed."""
    return _CONTROL.sub("", str(value))


def safe(value: object, style: str = "") -> Text:
    return Text(clean(value), style=style)


def fmt_num(value: float | None, digits: int = 1, unit: str = "") -> str:
    return "-" if value is None else f"{value:.{digits}f}{unit}"


def fmt_duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = int(max(0, seconds))
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d{hours:02d}h"
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s"
