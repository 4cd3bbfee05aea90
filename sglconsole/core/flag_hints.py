"""The nearest real flag for one argparse refused (a rename, a typo)."""

from __future__ import annotations

import difflib
import re


def did_you_mean(error: str, flags: list[str], skip: set[str] = frozenset()) -> str | None:
    """For an unknown flag, the closest flag this SGLang version has (a rename, a typo);
    none for the flags in `skip` (explained otherwise)."""
    match = re.search(r"unrecognized arguments: (.+)", error)
    if not match:
        return None
    hints = []
    for unknown in match.group(1).split():
        if unknown.startswith("--") and unknown.split("=")[0] not in skip:
            close = difflib.get_close_matches(unknown.split("=")[0], flags, n=1, cutoff=0.6)
            if close:
                hints.append(f"{unknown}: did you mean {close[0]}?")
    return "; ".join(hints) or None
